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
  /** An Event's note: kube-apiserver refuses more than 1 KiB. */
  public static final int NOTE_BYTES = 1024;
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

  /**
   * {@code message} on one line: messages quote what agents wrote (termination messages, reasons, Lease details),
   * and a line break or other control character in them would start a line of the agent's making where the
   * message is shown: the operator's log (a line that looks like an audit line, say), {@code kubectl describe}
   * (a row that looks like an Event of the operator's), a terminal (escape sequences). They (C0, DEL, C1, the line
   * and paragraph separators) are written as escapes: {@code \n}, {@code \r}, {@code \t}, {@code \}{@code u0085}. Text without them is returned as it is,
   * so escaping twice changes nothing.
   */
  public static String oneLine(String message) {
    StringBuilder out = null;
    for (int i = 0; i < message.length(); i++) {
      char c = message.charAt(i);
      if (!Character.isISOControl(c) && c != '\u2028' && c != '\u2029') { // C0, DEL and C1 (NEL, CSI)
        if (out != null) {
          out.append(c);
        }
        continue;
      }
      if (out == null) {
        out = new StringBuilder(message.length() + 16).append(message, 0, i);
      }
      switch (c) {
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> out.append(String.format("\\u%04x", (int) c));
      }
    }
    return out == null ? message : out.toString();
  }

  /**
   * {@code text} on one line ({@link #oneLine(String)}), then cut to {@code maxBytes} of UTF-8 without ending inside
   * an escape: what is written this way reads back the same after {@link #truncateUtf8} to the same bound.
   */
  public static String oneLine(String text, int maxBytes) {
    if (text == null) {
      return null;
    }
    String escaped = oneLine(text);
    String cut = truncateUtf8(escaped, maxBytes);
    int slash = cut.lastIndexOf('\\');
    if (cut.length() < escaped.length() && slash >= 0 && slash >= cut.length() - 5) {
      int escapeLength = escaped.startsWith("\\u", slash) ? 6 : 2;
      if (slash + escapeLength > cut.length()) {
        cut = cut.substring(0, slash);
      }
    }
    return cut;
  }
}
