package dev.respawn.simulate;

/** A story that cannot be simulated: an unknown token, a bad value, a field that does not apply. */
public class StoryException extends Exception {
  public StoryException(String message) {
    super(message);
  }
}
