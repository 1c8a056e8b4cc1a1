package dev.respawn.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code java -jar respawn.jar [operator|...]}: the operator (the default) and the kubectl plugin commands. */
@Command(name = "respawn", mixinStandardHelpOptions = true, version = "respawn 0.1.0",
    description = "Respawn keeps AI agents alive on Kubernetes.",
    subcommands = {OperatorCommand.class, StatusCommand.class, RestartCommand.class, ResumeCommand.class,
        VerifyRestartedCommand.class, SimulateCommand.class})
public final class RespawnCommand {
  private RespawnCommand() {}

  public static void main(String[] args) {
    System.exit(new CommandLine(new RespawnCommand()).execute(withDefaultCommand(args)));
  }

  /** No command, or only flags: the operator, as api.md §10 says. */
  static String[] withDefaultCommand(String[] args) {
    boolean topLevelFlag = args.length > 0 && List.of("-h", "--help", "-V", "--version").contains(args[0]);
    if (args.length == 0 || (args[0].startsWith("-") && !topLevelFlag)) {
      List<String> all = new ArrayList<>(List.of("operator"));
      all.addAll(List.of(args));
      return all.toArray(String[]::new);
    }
    return args;
  }
}
