package dev.respawn.observability;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LogFormatTest {
  private final String before = System.getProperty(LogFormat.VARIABLE);

  @AfterEach
  void restore() {
    if (before == null) {
      System.clearProperty(LogFormat.VARIABLE);
    } else {
      System.setProperty(LogFormat.VARIABLE, before);
    }
  }

  @Test
  void jsonInAnyCaseIsJsonAndAnythingElseIsText() {
    assertThat(LogFormat.of("json")).isEqualTo("json");
    assertThat(LogFormat.of(" JSON ")).isEqualTo("json");
    assertThat(LogFormat.of("Json")).isEqualTo("json");
    assertThat(LogFormat.of("text")).isEqualTo("text");
    assertThat(LogFormat.of("jsno")).isEqualTo("text");
    assertThat(LogFormat.of(null)).isEqualTo("text");
  }

  @Test
  void aValueLogbackHasNoFileForBecomesAFormatItHasAndIsToldOnce() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    LogFormat.apply("JSON", new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(System.getProperty(LogFormat.VARIABLE)).isEqualTo("json");
    assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    LogFormat.apply("yaml", new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(System.getProperty(LogFormat.VARIABLE)).isEqualTo("text");
    assertThat(err.toString(StandardCharsets.UTF_8))
        .isEqualTo("warning: RESPAWN_LOG_FORMAT=yaml is neither text nor json; logging as text\n");
    // every value has a file logback includes
    for (String format : new String[] {LogFormat.of("json"), LogFormat.of("anything")}) {
      assertThat(LogFormat.class.getResource("/respawn-logging-" + format + ".xml")).as(format).isNotNull();
    }
  }
}
