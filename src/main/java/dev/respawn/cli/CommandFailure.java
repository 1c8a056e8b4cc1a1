package dev.respawn.cli;

/** A plugin command ends with this message on stderr and this exit code; never a stack trace. */
final class CommandFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int exitCode;

  CommandFailure(String message, int exitCode) {
    super(message, null, false, false);
    this.exitCode = exitCode;
  }

  /** Exit code 1: the thing asked about is not in the state asked for, or the cluster said no. */
  static CommandFailure of(String message) {
    return new CommandFailure(message, 1);
  }

  static CommandFailure notFound(String name, String namespace) {
    return of("agentinstance \"" + name + "\" not found in namespace \"" + namespace + "\"");
  }

  int exitCode() {
    return exitCode;
  }
}
