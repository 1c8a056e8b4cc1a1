package dev.respawn.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BoundsTest {
  @Test
  void shortTextIsKept() {
    assertThat(Bounds.truncateUtf8("network_timeout", 512)).isEqualTo("network_timeout");
    assertThat(Bounds.truncateUtf8(null, 512)).isNull();
  }

  @Test
  void asciiIsCutAtTheLimit() {
    assertThat(Bounds.truncateUtf8("a".repeat(600), 512)).hasSize(512);
  }

  @Test
  void multiByteCharactersAreNeverSplit() {
    String text = "é".repeat(300); // 2 bytes each
    String cut = Bounds.truncateUtf8(text, 511);
    assertThat(cut.getBytes(StandardCharsets.UTF_8)).hasSize(510);
    assertThat(cut).isEqualTo("é".repeat(255));
  }

  @Test
  void surrogatePairsStayWhole() {
    String text = "ab" + "😀".repeat(200); // 4 bytes each
    String cut = Bounds.truncateUtf8(text, 256);
    assertThat(cut.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(256).isEqualTo(2 + 4 * 63);
    assertThat(Character.isHighSurrogate(cut.charAt(cut.length() - 1))).isFalse();
    assertThat(new String(cut.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)).isEqualTo(cut);
  }

  @Test
  void exactFitIsKept() {
    String text = "日本".repeat(10); // 60 bytes
    assertThat(Bounds.truncateUtf8(text, 60)).isEqualTo(text);
    assertThat(Bounds.truncateUtf8(text, 59)).isEqualTo(text.substring(0, 19));
  }

  /** §9: text that fits its bound whole is kept whole, also when it takes the encoder's path (over a third of it). */
  @Test
  void textThatFitsWholeIsKeptWholeWhateverItsLength() {
    String ascii = "a".repeat(400); // 400 bytes: fits 512
    assertThat(Bounds.truncateUtf8(ascii, 512)).isEqualTo(ascii);
    String mixed = "é".repeat(200) + "a".repeat(100); // 500 bytes
    assertThat(Bounds.truncateUtf8(mixed, 512)).isEqualTo(mixed);
  }

  /** §5: a checkpoint is "<= 256 bytes": exactly 256 fits, 257 does not. */
  @Test
  void fitsUtf8IsInclusiveOfTheBound() {
    assertThat(Bounds.fitsUtf8("c".repeat(256), Bounds.CHECKPOINT_BYTES)).isTrue();
    assertThat(Bounds.fitsUtf8("c".repeat(257), Bounds.CHECKPOINT_BYTES)).isFalse();
    assertThat(Bounds.fitsUtf8("é".repeat(129), Bounds.CHECKPOINT_BYTES)).as("258 bytes in 129 characters").isFalse();
  }

  /** Escaped, then cut: within the bound, never ending inside an escape, the same when cut again to it. */
  @Test
  void oneLineWithinABoundEndsOnAWholeEscape() {
    String text = "denied by policy require-labels:\n" + "x".repeat(490) + "\u001b[31mred\n\tmore";
    for (int max = 500; max <= 560; max++) {
      String line = Bounds.oneLine(text, max);
      assertThat(line.getBytes(StandardCharsets.UTF_8).length).as("bytes at %d", max).isLessThanOrEqualTo(max);
      assertThat(line).doesNotContainPattern("\\p{Cc}");
      assertThat(line).as("at %d", max).doesNotEndWith("\\").doesNotEndWith("\\u").doesNotEndWith("\\u00")
          .doesNotEndWith("\\u001");
      assertThat(Bounds.truncateUtf8(line, max)).isEqualTo(line);
      assertThat(Bounds.oneLine(line, max)).as("escaping twice changes nothing").isEqualTo(line);
    }
    assertThat(Bounds.oneLine(text, 4096)).endsWith("\\u001b[31mred\\n\\tmore");
    assertThat(Bounds.oneLine(null, 10)).isNull();
    // C1 controls too: NEL breaks lines for some tools, CSI starts a terminal's escape sequence
    assertThat(Bounds.oneLine("a\u0085b\u009b2Jc\u2028d")).isEqualTo("a\\u0085b\\u009b2Jc\\u2028d");
  }
}
