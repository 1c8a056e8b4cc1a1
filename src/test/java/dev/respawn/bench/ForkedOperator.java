package dev.respawn.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The harness's handle on an {@link OperatorProcess}: started, asked for its counts and heap, stopped. */
final class ForkedOperator implements AutoCloseable {
  static final String MAX_HEAP = "-Xmx1g";
  private final Process process;
  private final PrintWriter commands;
  private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();

  ForkedOperator(String url, String namespace, String userAgent) {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    try {
      process = new ProcessBuilder(List.of(java, MAX_HEAP, "-XX:+UseG1GC", "-cp",
          System.getProperty("java.class.path"), OperatorProcess.class.getName(), url, namespace, userAgent))
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
    Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          if (line.startsWith("started") || line.startsWith("stats ") || line.startsWith("heap ")
              || line.startsWith("live ")) {
            replies.add(line);
          } else {
            System.out.println("  [operator] " + line);
          }
        }
      } catch (IOException e) {
        replies.add("error " + e);
      }
    }, "forked-operator-stdout");
    reader.setDaemon(true);
    reader.start();
  }

  /** Waits until the operator has started (its informers synced). */
  ForkedOperator awaitStarted() {
    reply("started", 300);
    return this;
  }

  /** {reconciles, instances reconciled at least once}. */
  long[] stats() {
    commands.println("stats");
    String[] f = reply("stats", 60).split(" ");
    return new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])};
  }

  /** The operator JVM's used heap right after a full GC. */
  long heapAfterGc() {
    commands.println("heap");
    return Long.parseLong(reply("heap", 120).split(" ")[1]);
  }

  /** Bytes of the operator JVM's live objects after a full GC (its class histogram's total). */
  long liveBytes() {
    commands.println("live");
    return Long.parseLong(reply("live", 120).split(" ")[1]);
  }

  private String reply(String kind, int seconds) {
    try {
      String line = replies.poll(seconds, TimeUnit.SECONDS);
      if (line == null || !line.startsWith(kind)) {
        throw new IllegalStateException("the operator process answered " + line + " instead of " + kind
            + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")"));
      }
      return line;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    commands.close();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
