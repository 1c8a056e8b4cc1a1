package dev.respawn.api.v1alpha1;

import java.util.List;
import java.util.stream.Collectors;

/**
 * What had to be left out of a resource to read it: each field whose JSON value does not fit its Java
 * type (a string where a number goes: what the CRD schema refuses, but what an older cluster or bypassed
 * validation lets through), with the rule it breaks. It belongs to the object as it was read, never to
 * the resource: it is not serialized, so it is never written to the API server.
 */
public record Unreadable(List<Field> fields) {
  /** Read whole. */
  public static final Unreadable NONE = new Unreadable(List.of());

  /** One field left out: its path (such as {@code spec.maxRetries}) and the rule its value breaks. */
  public record Field(String path, String rule) {
    @Override
    public String toString() {
      return path + ": " + rule;
    }
  }

  public Unreadable {
    fields = List.copyOf(fields);
  }

  public boolean isEmpty() {
    return fields.isEmpty();
  }

  /** "field: rule; field: rule", or "" when the object was read whole. */
  public String describe() {
    return fields.stream().map(Field::toString).collect(Collectors.joining("; "));
  }

  /** The report an object carries: {@link #NONE} for anything that is not a Respawn resource. */
  public static Unreadable of(Object resource) {
    return resource instanceof Holder h ? h.unreadable() : NONE;
  }

  /**
   * A resource that carries its own report. The accessors are deliberately not bean properties: Jackson
   * and the CRD generator must not see them.
   */
  public interface Holder {
    /** What was left out when this object was read; {@link #NONE} when nothing was. */
    Unreadable unreadable();

    /** Set by the reader (and by a copy of the object, to the original's report). */
    void unreadable(Unreadable report);
  }
}
