package dev.respawn.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the agent helper {@code agent/python/respawn_agent.py} as a real process, as an agent's pod would,
 * with the env a pod of Respawn gets (RESPAWN_LEASE_NAME, RESPAWN_POD_NAME) and the API server given by
 * RESPAWN_API_URL and RESPAWN_NAMESPACE instead of the service account's files.
 */
public final class PythonAgent {
  public static final Path SCRIPT = Path.of("agent", "python", "respawn_agent.py").toAbsolutePath();
  /** The example agent of docs/agents.md: pass it as the only argument of {@link #run} to run it instead. */
  public static final String EXAMPLE = "--example-agent";
  static final long TIMEOUT_SECONDS = 60;

  /** What one run of the helper did. */
  public record Result(int exitCode, String out, String err) {}

  private final Map<String, String> env = new HashMap<>();

  public PythonAgent(String apiUrl, String namespace, String leaseName, String podName) {
    env.put("RESPAWN_API_URL", apiUrl);
    env.put("RESPAWN_NAMESPACE", namespace);
    env.put("RESPAWN_LEASE_NAME", leaseName);
    env.put("RESPAWN_POD_NAME", podName);
    env.put("RESPAWN_TOKEN", "test-token");
  }

  /** The same agent with one more (or another) environment variable. */
  public PythonAgent with(String key, String value) {
    PythonAgent copy = new PythonAgent(env.get("RESPAWN_API_URL"), env.get("RESPAWN_NAMESPACE"),
        env.get("RESPAWN_LEASE_NAME"), env.get("RESPAWN_POD_NAME"));
    copy.env.putAll(env);
    copy.env.put(key, value);
    return copy;
  }

  public Result run(String... args) {
    List<String> command = new ArrayList<>(List.of("python3"));
    if (args.length == 1 && EXAMPLE.equals(args[0])) {
      command.add(SCRIPT.resolveSibling("example_agent.py").toString());
    } else {
      command.add(SCRIPT.toString());
      command.addAll(List.of(args));
    }
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().keySet().removeIf(k -> k.startsWith("RESPAWN_") || k.equals("KUBERNETES_SERVICE_HOST"));
    builder.environment().putAll(env);
    try {
      Path out = Files.createTempFile("respawn-agent", ".out");
      Path err = Files.createTempFile("respawn-agent", ".err");
      Process p = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("respawn_agent.py " + String.join(" ", args) + " did not end within "
            + TIMEOUT_SECONDS + " s");
      }
      Result r = new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
      return r;
    } catch (IOException e) {
      throw new UncheckedIOException("could not run python3 " + SCRIPT + " (the agent helper's tests need python3 "
          + "on the PATH; .ci/run installs it when missing)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
