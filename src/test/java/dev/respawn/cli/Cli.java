package dev.respawn.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import picocli.CommandLine;

/** Runs {@code respawn ARGS...} in-process, as {@code kubectl respawn ARGS...} would, and captures what it says. */
final class Cli {
  private Cli() {}

  /** A kubeconfig in {@code dir} for the API server at {@code server}, with {@code namespace} as its namespace. */
  static java.nio.file.Path kubeconfig(java.nio.file.Path dir, String server, String namespace) throws IOException {
    return java.nio.file.Files.writeString(dir.resolve("config"), """
        apiVersion: v1
        kind: Config
        clusters:
        - name: c
          cluster: {server: "%s"}
        users:
        - name: u
          user: {token: not-checked}
        contexts:
        - name: x
          context: {cluster: c, user: u, namespace: %s}
        current-context: x
        """.formatted(server, namespace));
  }

  record Result(int exit, String out, String err) {
    JsonNode json() {
      try {
        return new ObjectMapper().readTree(out);
      } catch (IOException e) {
        throw new UncheckedIOException("stdout is not JSON: " + out, e);
      }
    }

    JsonNode yaml() {
      try {
        return new YAMLMapper().readTree(out);
      } catch (IOException e) {
        throw new UncheckedIOException("stdout is not YAML: " + out, e);
      }
    }

    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  static Result run(PluginEnvironment environment, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = RespawnCommand.withUsageErrors(RespawnCommand.withFleetStory(
        new CommandLine(RespawnCommand.class, environment.factory())));
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int exit = cli.execute(RespawnCommand.withDefaultCommand(args));
    return new Result(exit, out.toString(), err.toString());
  }
}
