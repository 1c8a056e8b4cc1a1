package dev.respawn.policy;

import dev.respawn.api.v1alpha1.DependencySpec;
import dev.respawn.api.v1alpha1.FailureAction;
import dev.respawn.api.v1alpha1.FailureMatch;
import dev.respawn.policy.RestartPolicy.Rule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/** Compiles spec.dependencies (api.md §11) with the schema's rules checked again, and blames failures. */
final class DependencyRules {
  static final int MAX_DEPENDENCIES = 16;
  /**
   * The most blames the policy's status may keep: each dependency keeps the latest blame of up to failureThreshold
   * instances ({@code recentBlame}), and the whole object must stay within the API server's (etcd's) 1.5 MiB.
   * 4,000 blames of 63-character names take about 470 KB, leaving room for the release order of a large fleet.
   */
  static final int MAX_BLAMES = 4000;
  private static final Pattern DNS_LABEL = Pattern.compile("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");

  private DependencyRules() {}

  static List<DependencySettings> compile(PolicyCompiler c, List<DependencySpec> specs) {
    if (specs.size() > MAX_DEPENDENCIES) {
      c.violations.add(new Violation("spec.dependencies", "must have at most " + MAX_DEPENDENCIES + " entries"));
    }
    List<DependencySettings> out = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (int i = 0; i < specs.size(); i++) {
      DependencySpec d = specs.get(i);
      String at = "spec.dependencies[" + i + "]";
      if (d == null) {
        c.violations.add(new Violation(at, "must be an object"));
        continue;
      }
      String name = c.required(at + ".name", d.name);
      if (name != null && (PolicyCompiler.chars(name) > 63 || !DNS_LABEL.matcher(name).matches())) {
        c.violations.add(new Violation(at + ".name", "must be a DNS-1123 label (lowercase letters, digits and '-', "
            + "1..63 characters)"));
      } else if (name != null && !names.add(name)) {
        c.violations.add(new Violation(at + ".name", "must be unique (\"" + name + "\" is used twice)"));
      }
      c.required(at + ".match", d.match);
      FailureMatch m = d.match == null ? new FailureMatch() : d.match;
      Rule match = new Rule(name == null ? "" : name, c.exitCodes(at + ".match.exitCodes", m.exitCodes),
          c.strings(at + ".match.reasons", m.reasons, 32, 0, 128), c.strings(at + ".match.messageContains",
          m.messageContains, 32, 1, 256), c.classes(at + ".match.classes", m.classes), FailureAction.Retry,
          Optional.empty(), Optional.empty());
      int threshold = c.range(at + ".failureThreshold", d.failureThreshold, 3, 1, 1000);
      Duration window = d.window == null ? Duration.ofMinutes(1) : c.positive(at + ".window", d.window);
      Duration open = d.openDuration == null ? Duration.ofSeconds(30) : c.positive(at + ".openDuration",
          d.openDuration);
      int probes = c.range(at + ".probes", d.probes, 1, 1, 100);
      double rate = c.range(at + ".releaseRate", d.releaseRate, 5.0, 0.0, 10000.0);
      out.add(new DependencySettings(name == null ? "" : name, match, threshold, window, open, probes, rate));
    }
    int blames = out.stream().mapToInt(DependencySettings::failureThreshold).sum();
    if (blames > MAX_BLAMES) {
      c.violations.add(new Violation("spec.dependencies", "failureThreshold must add up to at most " + MAX_BLAMES
          + " over all dependencies (it adds up to " + blames + "): the policy's status keeps the latest blame of up "
          + "to failureThreshold instances per dependency, and must fit within the API server's object size limit"));
    }
    return out;
  }

  /**
   * The dependency a failure is blamed on: the first whose match holds, for a failure whose action is
   * Retry (a failure the rules send to Fail or Ignore is not the dependency's doing).
   */
  static Optional<DependencySettings> blamedOn(RestartPolicy p, RunEnding e, Classification c) {
    if (c.action() != FailureAction.Retry) {
      return Optional.empty();
    }
    for (DependencySettings d : p.dependencies()) {
      if (FailureClassifier.matches(d.match(), e, c.interruptionClass())) {
        return Optional.of(d);
      }
    }
    return Optional.empty();
  }
}
