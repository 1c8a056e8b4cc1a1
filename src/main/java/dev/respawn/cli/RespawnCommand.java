package dev.respawn.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code java -jar respawn.jar [operator|...]}: the operator (the default) and the kubectl plugin commands. */
@Command(name = "respawn", mixinStandardHelpOptions = true, version = "respawn " + RespawnCommand.VERSION,
    description = "Respawn keeps AI agents alive on Kubernetes.",
    subcommands = {OperatorCommand.class, StatusCommand.class, RestartCommand.class, ResumeCommand.class,
        VerifyRestartedCommand.class, SimulateCommand.class, SimulateFleetCommand.class, SandboxCommand.class})
public final class RespawnCommand {
  /** This release: in --version and in the User-Agent of every request (the API server's audit log names it). */
  public static final String VERSION = "0.1.0";

  private RespawnCommand() {}

  public static void main(String[] args) {
    // before anything logs: logback reads the format when it starts
    dev.respawn.observability.LogFormat.apply(System.getenv(dev.respawn.observability.LogFormat.VARIABLE),
        System.err);
    CommandLine cli = withUsageErrors(withFleetStory(new CommandLine(new RespawnCommand())));
    System.exit(cli.execute(withDefaultCommand(args, cli.getSubcommands().keySet())));
  }

  /**
   * {@code simulate fleet}: the fleet story of api.md §11 under the command the contract names ("kubectl respawn
   * simulate can play a fleet story"), the same command as {@code simulate-fleet}.
   */
  static CommandLine withFleetStory(CommandLine cli) {
    CommandLine simulate = cli.getSubcommands().get("simulate");
    simulate.addSubcommand("fleet", SimulateFleetCommand.class);
    simulate.getSubcommands().get("fleet").getCommandSpec().name("fleet"); // its usage and errors say so
    return cli;
  }

  /**
   * A wrong flag, value or argument is one {@code error:} line naming it, and where help is; the usage is what
   * {@code --help} prints (exit code 2, picocli's for invalid input).
   */
  static CommandLine withUsageErrors(CommandLine cli) {
    cli.setParameterExceptionHandler((e, args) -> {
      CommandLine at = e.getCommandLine();
      at.getErr().println("error: " + e.getMessage() + " (see '" + at.getCommandSpec().qualifiedName()
          + " --help')");
      return at.getCommandSpec().exitCodeOnInvalidInput();
    });
    // a command that fails for a reason a person can act on says it in one line, without a stack trace
    cli.setExecutionExceptionHandler((e, at, parsed) -> {
      if (e instanceof CommandFailure failure) {
        at.getErr().println("error: " + failure.getMessage());
        return failure.exitCode();
      }
      throw e;
    });
    return cli;
  }

  /** {@link #withDefaultCommand(String[], java.util.Set)} with this CLI's commands. */
  static String[] withDefaultCommand(String[] args) {
    return withDefaultCommand(args, new CommandLine(new RespawnCommand()).getSubcommands().keySet());
  }

  /** The plugin's options that take a value (PluginOptions): what kubectl may put before a command. */
  private static final List<String> PLUGIN_VALUE_OPTIONS = List.of("-n", "--namespace", "--kubeconfig", "-o",
      "--output");

  /**
   * No command, or only flags: the operator, as api.md §10 says. The plugin's options written before the
   * command ({@code kubectl respawn -n agents status coder}) are moved after it, where they belong. Only
   * those: a value of an operator flag that happens to be a command's name ({@code --namespaces sandbox})
   * stays a value.
   */
  static String[] withDefaultCommand(String[] args, java.util.Set<String> commands) {
    int i = 0;
    while (i < args.length && args[i].startsWith("-")) {
      String arg = args[i];
      if (PLUGIN_VALUE_OPTIONS.contains(arg)) {
        i += 2;
      } else if (PLUGIN_VALUE_OPTIONS.stream().anyMatch(o -> arg.startsWith(o + "=")
          || (o.length() == 2 && arg.startsWith(o) && arg.length() > 2))) {
        i += 1; // --namespace=agents, -nagents
      } else {
        break;
      }
    }
    if (i > 0 && i < args.length && commands.contains(args[i])) {
      List<String> all = new ArrayList<>(List.of(args[i]));
      all.addAll(List.of(args).subList(0, i));
      all.addAll(List.of(args).subList(i + 1, args.length));
      return all.toArray(String[]::new);
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
