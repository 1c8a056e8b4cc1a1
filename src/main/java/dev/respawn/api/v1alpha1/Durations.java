package dev.respawn.api.v1alpha1;

/** Schema constants shared by every duration field of the API. */
public final class Durations {
  /** Go-style duration: one or more number+unit pairs, e.g. 500ms, 2s, 1h30m. */
  public static final String PATTERN = "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$";
  /** Longest duration string accepted (keeps CEL cost estimates small). */
  public static final long MAX_LENGTH = 32;

  private Durations() {}
}
