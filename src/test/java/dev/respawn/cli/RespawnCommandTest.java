package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

class RespawnCommandTest {
  static final Set<String> COMMANDS = Set.of("operator", "status", "restart");

  @Test
  void noCommandMeansTheOperator() {
    assertThat(RespawnCommand.withDefaultCommand(new String[0], COMMANDS)).containsExactly("operator");
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"--tier", "Teams"}, COMMANDS))
        .containsExactly("operator", "--tier", "Teams");
  }

  @Test
  void optionsBeforeTheCommandMoveAfterIt() {
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"-n", "agents", "status", "coder"}, COMMANDS))
        .containsExactly("status", "-n", "agents", "coder");
  }

  @Test
  void anOperatorFlagsValueThatIsACommandsNameStaysItsValue() {
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"--namespaces", "status", "--metrics-port", "0"},
        COMMANDS)).containsExactly("operator", "--namespaces", "status", "--metrics-port", "0");
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"--default-policy", "restart"}, COMMANDS))
        .containsExactly("operator", "--default-policy", "restart");
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"--kubeconfig", "k", "-o=json", "status", "x"},
        COMMANDS)).containsExactly("status", "--kubeconfig", "k", "-o=json", "x");
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"-nagents", "-ojson", "status", "x"}, COMMANDS))
        .containsExactly("status", "-nagents", "-ojson", "x");
  }

  @Test
  void commandsAndTopLevelFlagsStayAsGiven() {
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"status", "coder"}, COMMANDS))
        .containsExactly("status", "coder");
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"--help"}, COMMANDS)).containsExactly("--help");
  }

  /** No command, only flags: the operator (api.md §10), also when the flags are ones the plugin knows. */
  @Test
  void onlyFlagsMeanTheOperatorEvenWhenNoCommandFollowsThePluginsOptions() {
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"--kubeconfig", "k"}, COMMANDS))
        .containsExactly("operator", "--kubeconfig", "k");
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"-n"}, COMMANDS)).containsExactly("operator", "-n");
    assertThat(RespawnCommand.withDefaultCommand(new String[] {"-nagents", "--tier", "Teams"}, COMMANDS))
        .containsExactly("operator", "-nagents", "--tier", "Teams");
  }
}
