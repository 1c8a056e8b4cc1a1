package dev.respawn.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code java -jar respawn.jar [operator|...]}: the operator (the default) and the kubectl plugin commands. */
@Command(name = "respawn", mixinStandardHelpOptions = true, version = "respawn 0.1.0",
    description = "Respawn keeps AI agents alive on Kubernetes.",
    subcommands = {OperatorCommand.class, StatusCommand.class, RestartCommand.class, ResumeCommand.class,
        VerifyRestartedCommand.class, SimulateCommand.class, SimulateFleetCommand.class, SandboxCommand.class})
public final class RespawnCommand {
  private RespawnCommand() {}

  public static void main(String[] args) {
    CommandLine cli = new CommandLine(new RespawnCommand());
    System.exit(cli.execute(withDefaultCommand(args, cli.getSubcommands().keySet())));
  }

  /** {@link #withDefaultCommand(String[], java.util.Set)} with this CLI's commands. */
  static String[] withDefaultCommand(String[] args) {
    return withDefaultCommand(args, new CommandLine(new RespawnCommand()).getSubcommands().keySet());
  }

  /**
   * No command, or only flags: the operator, as api.md §10 says. Options written before the command
   * ({@code kubectl respawn -n agents status coder}) are moved after it, where they belong.
   */
  static String[] withDefaultCommand(String[] args, java.util.Set<String> commands) {
    for (int i = 1; i < args.length; i++) {
      if (commands.contains(args[i]) && args[0].startsWith("-")) {
        List<String> all = new ArrayList<>(List.of(args[i]));
        all.addAll(List.of(args).subList(0, i));
        all.addAll(List.of(args).subList(i + 1, args.length));
        return all.toArray(String[]::new);
      }
    }
    boolean topLevelFlag = args.length > 0 && List.of("-h", "--help", "-V", "--version").contains(args[0]);
    if (args.length == 0 || (args[0].startsWith("-") && !topLevelFlag)) {
      List<String> all = new ArrayList<>(List.of("operator"));
      all.addAll(List.of(args));
      return all.toArray(String[]::new);
    }
    return args;
  }
}
