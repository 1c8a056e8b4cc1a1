package dev.respawn.policy;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;

/** The size limits of api.md §9; text is cut on a UTF-8 character boundary, never inside one. */
public final class Bounds {
  public static final int MESSAGE_BYTES = 512;
  /** A container's termination message as a kubelet reports it: at most 4 KiB. */
  public static final int TERMINATION_MESSAGE_BYTES = 4096;
  public static final int DETAIL_BYTES = 512;
  public static final int REQUEST_ID_BYTES = 256;
  public static final int CHECKPOINT_BYTES = 256;
  public static final int HISTORY_ENTRIES = 10;
  /** Request ids remembered per kind before the last one (status.earlierRequests). */
  public static final int EARLIER_REQUESTS = 10;
  public static final int MAX_RETRIES = 1000;
  /** The largest count (run, attempt, restarts) read from status: far from int overflow when counted on. */
  public static final int COUNT_LIMIT = 1_000_000_000;
  public static final int MAX_RESTARTS = 1000;
  public static final int MAX_FAILURE_THRESHOLD = 100;

  private Bounds() {}

  /** True when {@code text} is null or its UTF-8 encoding fits in {@code maxBytes} whole. */
  public static boolean fitsUtf8(String text, int maxBytes) {
    return text == null || text.getBytes(StandardCharsets.UTF_8).length <= maxBytes;
  }

  /** The longest prefix of {@code text} whose UTF-8 encoding fits in {@code maxBytes}; null stays null. */
  public static String truncateUtf8(String text, int maxBytes) {
    if (text == null || text.length() * 3 <= maxBytes) {
      return text;
    }
    CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder();
    ByteBuffer out = ByteBuffer.allocate(maxBytes);
    CharBuffer in = CharBuffer.wrap(text);
    CoderResult result = encoder.encode(in, out, true);
    if (result.isUnderflow()) {
      return text;
    }
    // the encoder stops before a character (or surrogate pair) that does not fit whole
    return text.substring(0, in.position());
  }
}
