package dev.respawn.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * A {@code kubectl respawn} command: connects, runs, and turns every failure into one line on stderr
 * ({@code error: ...}) and an exit code, never a stack trace. Usage errors stay picocli's (exit 2).
 */
abstract class PluginCommand implements Callable<Integer> {
  @Mixin
  PluginOptions options;

  @Spec
  CommandSpec spec;

  /** Replaced by tests (through {@link PluginEnvironment#factory()}). */
  PluginEnvironment environment = PluginEnvironment.system();

  /** The command itself; returns the exit code. */
  abstract int run(Cluster cluster);

  @Override
  public final Integer call() {
    Cluster cluster;
    try {
      cluster = environment.connect(options);
    } catch (CommandFailure e) {
      return fail(e.getMessage(), e.exitCode());
    } catch (RuntimeException e) {
      return fail(ApiErrors.describe(e, "the configured address"), 1);
    }
    try {
      return run(cluster);
    } catch (ParameterException e) {
      throw e;
    } catch (CommandFailure e) {
      return fail(e.getMessage(), e.exitCode());
    } catch (RuntimeException e) {
      return fail(ApiErrors.describe(e, cluster.url()), 1);
    } finally {
      cluster.close();
    }
  }

  PrintWriter out() {
    return spec.commandLine().getOut();
  }

  PrintWriter err() {
    return spec.commandLine().getErr();
  }

  void print(Object document, Supplier<String> table) {
    Printer.print(out(), options.output, document, table);
  }

  /** A usage error: picocli prints it with the usage hint and exits 2. */
  ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  /** status.run of the instance as read before a request was made (0 before its first run). */
  static int runOf(dev.respawn.api.v1alpha1.AgentInstance before) {
    return before.getStatus() == null || before.getStatus().run == null ? 0 : before.getStatus().run;
  }

  /** A warning goes to stderr as kubectl prints one ("Warning: ..."), leaving stdout to the result. */
  void warn(String warning) {
    if (warning != null) {
      err().println("Warning: " + warning);
      err().flush();
    }
  }

  int fail(String message, int exitCode) {
    err().println("error: " + message);
    err().flush();
    return exitCode;
  }
}
