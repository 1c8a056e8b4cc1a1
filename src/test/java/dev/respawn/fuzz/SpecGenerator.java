package dev.respawn.fuzz;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Generates AgentRestartPolicy specs as JSON trees (maps, lists, strings, numbers), valid and not, and
 * knows which fields of each one the contract refuses: the CRD schema of crds/ (ranges, enums, duration
 * pattern, lengths, required fields), its CEL rules (unique rule names, resetAfter > 0, maxDelay >=
 * initialDelay) and the operator's documented rules (windows, timeouts and openDuration > 0, durations up
 * to 2562047h, at most 64 rules).
 *
 * <p>Left out on purpose, because the operator disagrees with the schema there (see {@link
 * PolicyCompilerFuzzProperties} for each known disagreement): durations longer than 32 characters,
 * match.reasons entries of 129..256 characters, more than 5 match.classes, and names or substrings
 * whose UTF-16 length exceeds their length in characters (supplementary characters).
 *
 * <p>With {@code wrongTypes}, a few values get a JSON type the field cannot take (a string where a
 * number goes, a number where an object goes, ...): the spec then cannot be read into the Java classes
 * at all, only the operator's tolerant reader sees it.
 */
final class SpecGenerator {
  /** A generated spec; {@code invalid}: the spec.* fields the contract refuses. */
  record Generated(Map<String, Object> spec, Set<String> invalid, boolean wrongTypes) {
    boolean valid() {
      return invalid.isEmpty();
    }
  }

  static final List<String> BACKOFF_TYPES = List.of("None", "Immediate", "Linear", "Exponential");
  static final List<String> ACTIONS = List.of("Retry", "Fail", "Ignore");
  static final List<String> CLASSES = List.of("ToolFailure", "Timeout", "ContextReset", "ProcessCrash", "Unknown");
  static final List<String> MODES = List.of("Off", "Prefer", "Require");
  static final String HUGE_ASCII = "x".repeat(10 * 1024);
  static final String HUGE_UNICODE = "é日".repeat(10 * 1024 / 5);

  private final Random r;
  private final boolean wrongTypes;
  private final double invalidRate;
  private final Set<String> invalid = new LinkedHashSet<>();
  private boolean wrongTyped;

  private SpecGenerator(long seed, boolean wrongTypes, double invalidRate) {
    this.r = new Random(seed);
    this.wrongTypes = wrongTypes;
    this.invalidRate = invalidRate;
  }

  /**
   * A spec from this seed; {@code invalidRate}: the chance of each present field to be invalid (0: only
   * valid specs).
   */
  static Generated generate(long seed, boolean wrongTypes, double invalidRate) {
    SpecGenerator g = new SpecGenerator(seed, wrongTypes, invalidRate);
    Map<String, Object> spec = g.spec();
    return new Generated(spec, Set.copyOf(g.invalid), g.wrongTyped);
  }

  private Map<String, Object> spec() {
    Map<String, Object> s = new LinkedHashMap<>();
    if (present()) {
      s.put("backoff", backoff());
    }
    maybe(s, "maxRetries", "spec.maxRetries", this::retries);
    maybe(s, "resetAfter", "spec.resetAfter", () -> duration(true));
    if (chance(0.3)) {
      s.put("restartLimit", restartLimit());
    }
    if (present()) {
      s.put("circuitBreaker", circuit());
    }
    if (chance(0.5)) {
      s.put("failureRules", rules());
    }
    if (chance(0.3)) {
      Map<String, Object> h = new LinkedHashMap<>();
      maybe(h, "timeout", "spec.heartbeat.timeout", () -> duration(true));
      maybe(h, "startupGrace", "spec.heartbeat.startupGrace", () -> duration(false));
      s.put("heartbeat", h);
    }
    maybe(s, "restartRequestExitCode", "spec.restartRequestExitCode", () -> ranged(1, 255));
    if (chance(0.3)) {
      s.put("resume", resume());
    }
    if (wrongTypes) {
      spoil(s, "spec");
    }
    return s;
  }

  private Map<String, Object> backoff() {
    Map<String, Object> b = new LinkedHashMap<>();
    maybe(b, "type", "spec.backoff.type", () -> enumValue(BACKOFF_TYPES));
    // initialDelay and maxDelay: the cross-field rule holds only when both read
    String initial = null;
    String max = null;
    boolean initialOk = true;
    boolean maxOk = true;
    if (present()) {
      Slot v = duration(false);
      b.put("initialDelay", v.value);
      initial = (String) v.value;
      initialOk = v.valid;
      if (!v.valid) {
        invalid.add("spec.backoff.initialDelay");
      }
    }
    if (present()) {
      Slot v = duration(false);
      b.put("maxDelay", v.value);
      max = (String) v.value;
      maxOk = v.valid;
      if (!v.valid) {
        invalid.add("spec.backoff.maxDelay");
      }
    }
    if (initialOk && maxOk && nanos(max == null ? "120s" : max) < nanos(initial == null ? "2s" : initial)) {
      if (invalidRate > 0) {
        invalid.add("spec.backoff.maxDelay");
      } else {
        b.put("maxDelay", initial == null ? "2s" : initial);
      }
    }
    maybe(b, "multiplier", "spec.backoff.multiplier", () -> real(1.0, 10.0));
    maybe(b, "jitter", "spec.backoff.jitter", () -> real(0.0, 1.0));
    return b;
  }

  private Map<String, Object> restartLimit() {
    Map<String, Object> l = new LinkedHashMap<>();
    if (chance(invalidRate)) {
      invalid.add("spec.restartLimit.maxRestarts"); // required
    } else {
      put(l, "maxRestarts", "spec.restartLimit.maxRestarts", ranged(1, 1000));
    }
    if (chance(invalidRate)) {
      invalid.add("spec.restartLimit.window"); // required
    } else {
      put(l, "window", "spec.restartLimit.window", duration(true));
    }
    return l;
  }

  private Map<String, Object> circuit() {
    Map<String, Object> c = new LinkedHashMap<>();
    maybe(c, "failureThreshold", "spec.circuitBreaker.failureThreshold", () -> ranged(1, 100));
    maybe(c, "window", "spec.circuitBreaker.window", () -> duration(true));
    maybe(c, "openDuration", "spec.circuitBreaker.openDuration", () -> duration(true));
    if (present()) {
      c.put("latch", r.nextBoolean());
    }
    return c;
  }

  private Map<String, Object> resume() {
    Map<String, Object> m = new LinkedHashMap<>();
    maybe(m, "mode", "spec.resume.mode", () -> enumValue(MODES));
    maybe(m, "maxAttempts", "spec.resume.maxAttempts", () -> ranged(0, 1000));
    if (present()) {
      Map<String, Object> c = new LinkedHashMap<>();
      for (String k : List.of("ToolFailure", "Timeout", "ContextReset", "ProcessCrash")) {
        maybe(c, k, "spec.resume.cooldowns." + k, () -> duration(false));
      }
      m.put("cooldowns", c);
    }
    return m;
  }

  private List<Object> rules() {
    List<Object> rules = new ArrayList<>();
    if (chance(invalidRate / 4)) {
      // too many rules: only that is checked here, the rules themselves are all fine
      for (int i = 0; i < 65; i++) {
        Map<String, Object> rule = new LinkedHashMap<>();
        rule.put("name", "rule-" + i);
        rule.put("action", "Retry");
        rules.add(rule);
      }
      invalid.add("spec.failureRules");
      return rules;
    }
    int n = r.nextInt(5);
    Set<String> names = new LinkedHashSet<>();
    for (int i = 0; i < n; i++) {
      String at = "spec.failureRules[" + i + "]";
      if (chance(invalidRate / 4)) {
        rules.add(null);
        invalid.add(at);
        continue;
      }
      Map<String, Object> rule = new LinkedHashMap<>();
      if (chance(invalidRate / 3)) {
        invalid.add(at + ".name"); // required
      } else if (!names.isEmpty() && chance(invalidRate)) {
        // the same name again: conflicting with an earlier rule
        rule.put("name", names.iterator().next());
        invalid.add(at + ".name");
      } else {
        Slot name = name();
        rule.put("name", name.value);
        if (!name.valid) {
          invalid.add(at + ".name");
        } else if (!names.add((String) name.value)) {
          if (invalidRate > 0) {
            invalid.add(at + ".name");
          } else {
            rule.put("name", name.value + "-" + i);
            names.add(name.value + "-" + i);
          }
        }
      }
      if (present()) {
        rule.put("match", match(at + ".match"));
      }
      if (chance(invalidRate / 3)) {
        invalid.add(at + ".action"); // required
      } else {
        put(rule, "action", at + ".action", enumValue(ACTIONS));
      }
      maybe(rule, "maxRetries", at + ".maxRetries", () -> ranged(0, 1000));
      maybe(rule, "cooldown", at + ".cooldown", () -> duration(false));
      rules.add(rule);
    }
    return rules;
  }

  private Map<String, Object> match(String at) {
    Map<String, Object> m = new LinkedHashMap<>();
    if (present()) {
      List<Object> codes = new ArrayList<>();
      int n = chance(invalidRate / 6) ? 65 : r.nextInt(4);
      if (n > 64) {
        invalid.add(at + ".exitCodes");
      }
      for (int i = 0; i < n; i++) {
        Slot c = n > 64 ? new Slot(r.nextInt(256), true) : ranged(0, 255);
        codes.add(c.value);
        if (!c.valid) {
          invalid.add(at + ".exitCodes[" + i + "]");
        }
      }
      m.put("exitCodes", codes);
    }
    if (present()) {
      m.put("reasons", strings(at + ".reasons", 0, 128));
    }
    if (present()) {
      m.put("messageContains", strings(at + ".messageContains", 1, 256));
    }
    if (present()) {
      List<Object> classes = new ArrayList<>();
      int n = r.nextInt(4);
      for (int i = 0; i < n; i++) {
        Slot c = enumValue(CLASSES);
        classes.add(c.value);
        if (!c.valid) {
          invalid.add(at + ".classes[" + i + "]");
        }
      }
      m.put("classes", classes);
    }
    return m;
  }

  private List<Object> strings(String field, int min, int max) {
    List<Object> out = new ArrayList<>();
    int n = r.nextInt(4);
    for (int i = 0; i < n; i++) {
      if (chance(invalidRate)) {
        Object bad = pick(min > 0 ? List.of("", HUGE_ASCII, HUGE_UNICODE) : List.of(HUGE_ASCII, HUGE_UNICODE));
        out.add(bad);
        invalid.add(field + "[" + i + "]");
      } else {
        out.add(text(min, max));
      }
    }
    return out;
  }

  // --- values ------------------------------------------------------------------------------------

  /** A value and whether the contract accepts it. */
  record Slot(Object value, boolean valid) {}

  private Slot retries() {
    return ranged(0, 1000);
  }

  private Slot ranged(int min, int max) {
    if (chance(invalidRate)) {
      long bad = pick(List.of((long) min - 1, (long) max + 1, (long) Integer.MIN_VALUE, (long) Integer.MAX_VALUE,
          (long) min - 1 - r.nextInt(1000), (long) max + 1 + r.nextInt(100_000)));
      return new Slot((int) bad, false);
    }
    int span = max - min + 1;
    return new Slot(pick(List.of(min, max, min + r.nextInt(span))), true);
  }

  private Slot real(double min, double max) {
    if (chance(invalidRate)) {
      return new Slot(pick(List.of(min - 0.001, max + 0.5, -1e9, 1e300, min - r.nextDouble() * 100,
          max + r.nextDouble() * 100)), false);
    }
    return new Slot(pick(List.of(min, max, min + r.nextDouble() * (max - min))), true);
  }

  private Slot enumValue(List<String> allowed) {
    if (chance(invalidRate)) {
      String v = allowed.get(r.nextInt(allowed.size()));
      List<String> bad = new ArrayList<>(List.of(v.toLowerCase(), v.toUpperCase(), v + " ", "", "Éxponential", "指数",
          "None\u0000", HUGE_ASCII, HUGE_UNICODE, "Other" + r.nextInt(100)));
      bad.removeAll(allowed);
      return new Slot(pick(bad), false);
    }
    return new Slot(allowed.get(r.nextInt(allowed.size())), true);
  }

  private Slot name() {
    if (chance(invalidRate)) {
      return new Slot(pick(List.of("", "n".repeat(64), HUGE_ASCII, HUGE_UNICODE)), false);
    }
    return new Slot(text(1, 63), true);
  }

  /** 1..max characters, all in the Basic Multilingual Plane (so UTF-16 length = characters). */
  private String text(int min, int max) {
    int len = pick(List.of(min, max, min + r.nextInt(max - min + 1), Math.min(max, min + r.nextInt(12))));
    String alphabet = pick(List.of("abcdefghijklmnopqrstuvwxyz0123456789-", "éèàçñøßÆ日本語中文한국어ü",
        "network_timeout syntax_error OOMKilled Error", "\t\"'\\{}[]:,#&*!|>%@`"));
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < len; i++) {
      sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
    }
    return sb.toString();
  }

  /** A Go duration of at most 32 characters; {@code positive}: 0 is refused. */
  private Slot duration(boolean positive) {
    if (chance(invalidRate)) {
      List<String> bad = new ArrayList<>(List.of("", "5", "1d", "-1s", "1.s", ".5s", "s", " 1s", "1s ", "1S",
          "１s", "1秒", "∞s", "1e3s", "0x10s", "2562048h", "99999999999999h", HUGE_ASCII, HUGE_UNICODE));
      if (positive) {
        bad.addAll(List.of("0s", "0ms", "0h0m0s"));
      }
      return new Slot(pick(bad), false);
    }
    long ms = pick(List.of(positive ? 1L : 0L, 1L + r.nextInt(1000), 1000L * (1 + r.nextInt(3600)),
        3_600_000L * (1 + r.nextInt(100))));
    String text = switch (r.nextInt(4)) {
      case 0 -> ms + "ms";
      case 1 -> ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
      case 2 -> ms % 60_000 == 0 ? ms / 60_000 + "m" : ms / 1000 + "s" + ms % 1000 + "ms";
      default -> ms * 1000 + "us";
    };
    if (positive && nanos(text) == 0) {
      text = "1ms";
    }
    return new Slot(text, true);
  }

  /** Go-duration nanoseconds of a valid text (as the generator writes them). */
  static long nanos(String text) {
    return dev.respawn.policy.GoDuration.parse(text).toNanos();
  }

  // --- wrong JSON types ------------------------------------------------------------------------------

  /** Replaces one value somewhere in this object by a value of a JSON type the field cannot take. */
  @SuppressWarnings("unchecked")
  private void spoil(Map<String, Object> object, String path) {
    List<String> keys = new ArrayList<>(object.keySet());
    if (keys.isEmpty()) {
      object.put("maxRetries", "three");
      wrong(path + ".maxRetries");
      return;
    }
    String key = keys.get(r.nextInt(keys.size()));
    Object v = object.get(key);
    String at = path + "." + key;
    if (v instanceof Map<?, ?> m && !m.isEmpty() && chance(0.6)) {
      spoil((Map<String, Object>) m, at);
    } else if (v instanceof List<?> l && !l.isEmpty() && l.get(0) instanceof Map<?, ?> first && chance(0.6)) {
      spoil((Map<String, Object>) first, at + "[0]");
    } else {
      Object bad;
      if (v instanceof Map<?, ?>) {
        bad = pick(List.of("yes", 7, List.of(1, 2)));
      } else if (v instanceof List<?>) {
        bad = pick(List.of("x", 5, Map.of("a", 1)));
      } else if (v instanceof Number) {
        bad = pick(List.of("abc", "three", Map.of("n", 1), List.of(3)));
      } else if (v instanceof Boolean) {
        bad = pick(List.of("maybe", Map.of(), List.of(true)));
      } else {
        bad = pick(List.of(Map.of("s", "1s"), List.of("1s", "2s")));
      }
      object.put(key, bad);
      wrong(at);
    }
  }

  private void wrong(String field) {
    wrongTyped = true;
    // the value now in the field is unreadable: whatever was expected of it before is moot
    invalid.removeIf(f -> f.equals(field) || f.startsWith(field + ".") || f.startsWith(field + "["));
    invalid.add(field);
  }

  // --- helpers ---------------------------------------------------------------------------------------

  private interface Value {
    Slot get();
  }

  private boolean present() {
    return r.nextInt(3) > 0;
  }

  private boolean chance(double p) {
    return r.nextDouble() < p;
  }

  private <T> T pick(List<T> options) {
    return options.get(r.nextInt(options.size()));
  }

  private void maybe(Map<String, Object> into, String key, String field, Value value) {
    if (present()) {
      put(into, key, field, value.get());
    }
  }

  private void put(Map<String, Object> into, String key, String field, Slot v) {
    into.put(key, v.value);
    if (!v.valid) {
      invalid.add(field);
    }
  }
}
