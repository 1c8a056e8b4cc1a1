package dev.respawn.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The plugin's human output: kubectl-style tables (left-aligned columns three spaces apart) and label/value lines. */
class TableTest {
  static final String NL = System.lineSeparator();

  @Test
  void columnsAreLeftAlignedThreeSpacesApartAndAnEmptyCellIsADash() {
    String table = new Table("NAME", "PHASE", "REASON").row("coder", "Escalated", "retries_exhausted")
        .row("reviewer-long-name", null, "").toString();

    assertThat(table.split(NL)).containsExactly(
        "NAME                 PHASE       REASON",
        "coder                Escalated   retries_exhausted",
        "reviewer-long-name   -           -");
  }

  @Test
  void noLineEndsInSpaces() {
    String table = new Table("NAME", "NOTE").row("a-long-name", "x").row("b", "-").toString();

    assertThat(table.lines()).allSatisfy(l -> assertThat(l).doesNotEndWith(" "));
    assertThat(table).endsWith(NL);
  }

  @Test
  void fieldsAreLabelValueLinesWithTheValuesAligned() {
    String fields = Table.fields(new String[][] {{"Restarted", "yes"}, {"Previous pod", "coder-2"},
        {"Request id", null}});

    assertThat(fields.split(NL)).hasSize(3).allSatisfy(l -> {
      assertThat(l.indexOf(": ")).as("a colon and a space after the label: %s", l).isPositive();
      assertThat(l.length() - l.stripLeading().length()).isZero();
    });
    assertThat(fields.split(NL)).extracting(l -> l.substring(0, l.indexOf(':') + 1))
        .containsExactly("Restarted:", "Previous pod:", "Request id:");
    assertThat(fields.split(NL)).extracting(l -> l.substring(l.indexOf(':') + 1).strip())
        .containsExactly("yes", "coder-2", "-");
    assertThat(fields.split(NL)).extracting(l -> l.length() - l.substring(l.indexOf(':') + 1).stripLeading().length())
        .as("the values start in one column").containsOnly(fields.split(NL)[1].indexOf("coder-2"));
  }
}
