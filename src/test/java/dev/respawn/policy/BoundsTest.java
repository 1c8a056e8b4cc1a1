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
}
