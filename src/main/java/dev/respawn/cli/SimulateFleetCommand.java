package dev.respawn.cli;

import dev.respawn.policy.GoDuration;
import dev.respawn.policy.PolicyCompiler;
import dev.respawn.policy.PolicyInvalidException;
import dev.respawn.policy.RestartPolicy;
import dev.respawn.simulate.FleetSimulation;
import dev.respawn.simulate.FleetSimulation.FleetStory;
import dev.respawn.simulate.FleetSimulation.Outcome;
import dev.respawn.simulate.PolicyFile;
import dev.respawn.simulate.PolicyFile.PolicyFileException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kubectl respawn simulate-fleet}: a fleet of instances of one policy meets an outage of the
 * upstream they share; what happens with the policy's shared dependencies, and without them.
 */
@Command(name = "simulate-fleet", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Show what a policy's shared dependencies (spec.dependencies) save when the upstream a whole "
        + "fleet uses goes down: N instances, an outage from --outage-start to --outage-end, played through the "
        + "operator's own decision core in virtual time, once with the policy as written and once without its "
        + "dependencies.", ""})
final class SimulateFleetCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = {"-f", "--filename"}, required = true, paramLabel = "FILE",
      description = "YAML with the AgentRestartPolicy (the first one, or the one --policy names).")
  String file;

  @Option(names = "--policy", paramLabel = "NAME", description = "Which policy of the file.")
  String policyName;

  @Option(names = "--instances", defaultValue = "20", paramLabel = "N", description = "Instances of the policy "
      + "(1..1000; default 20).")
  int instances;

  @Option(names = "--outage-start", defaultValue = "10s", paramLabel = "DURATION",
      description = "When the upstream goes down, from t=0 (default 10s).")
  String outageStart;

  @Option(names = "--outage-end", defaultValue = "4m", paramLabel = "DURATION",
      description = "When it is back (default 4m).")
  String outageEnd;

  @Option(names = "--fail-after", defaultValue = "5s", paramLabel = "DURATION",
      description = "How long a run takes to meet the dead upstream (default 5s).")
  String failAfter;

  @Option(names = "--stagger", defaultValue = "200ms", paramLabel = "DURATION",
      description = "Between one agent's first failure and the next one's (default 200ms).")
  String stagger;

  @Option(names = "--message", defaultValue = "upstream model API answered HTTP 503", paramLabel = "TEXT",
      description = "The termination message of the failures (what dependencies[].match sees).")
  String message;

  @Option(names = "--seed", defaultValue = "1", paramLabel = "N", description = "Jitter seed (default 1).")
  long seed;

  /** The option's value as a duration; a value that is none is refused naming the option and the value. */
  private static java.time.Duration duration(String option, String value) {
    try {
      return GoDuration.parse(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + " '" + value + "': " + e.getMessage(), e);
    }
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try {
      var loaded = PolicyFile.read(Files.readString(Path.of(file)), file, policyName);
      if (instances < 1 || instances > 1000) {
        err.println("error: --instances must be 1..1000");
        return SimulateCommand.INVALID;
      }
      FleetStory story = new FleetStory(instances, duration("--outage-start", outageStart),
          duration("--outage-end", outageEnd), duration("--fail-after", failAfter), duration("--stagger", stagger),
          message);
      RestartPolicy with = PolicyCompiler.compile(loaded.spec());
      if (with.dependencies().isEmpty()) {
        err.println("error: AgentRestartPolicy " + loaded.name() + " names no spec.dependencies");
        return SimulateCommand.INVALID;
      }
      var spec = loaded.spec();
      var saved = spec.dependencies;
      spec.dependencies = null;
      RestartPolicy without = PolicyCompiler.compile(spec);
      spec.dependencies = saved;
      print(out, story, new FleetSimulation(with, story, seed).run(), new FleetSimulation(without, story, seed).run());
      out.flush();
      return SimulateCommand.OK;
    } catch (IOException e) {
      err.println("error: cannot read " + file + ": " + e.getMessage());
      return SimulateCommand.INVALID;
    } catch (PolicyFileException | PolicyInvalidException | IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return SimulateCommand.INVALID;
    }
  }

  private static void print(PrintWriter out, FleetStory story, Outcome with, Outcome without) {
    out.printf("%d instances; the upstream is down from +%s to +%s%n%n", story.size(),
        GoDuration.format(story.outageStart()), GoDuration.format(story.outageEnd()));
    out.println("Shared circuit:");
    with.transitions().forEach(t -> out.println("  " + t));
    out.println();
    out.printf("%-44s %18s %18s%n", "", "with dependencies", "without");
    row(out, "restarts into the outage", with.restartsIntoOutage(), without.restartsIntoOutage());
    row(out, "failures counted against agents (retries)", with.failuresCounted(), without.failuresCounted());
    row(out, "instances escalated", with.escalated(), without.escalated());
    row(out, "peak restarts in one second", with.peakRestartsPerSecond(), without.peakRestartsPerSecond());
    out.printf("%-44s %18s %18s%n", "all running again after the recovery", recovered(with, story),
        recovered(without, story));
    out.println();
    out.println("When each instance restarts, with dependencies (from t=0; * = into the outage):");
    java.util.Map<String, java.util.List<String>> byInstance = new java.util.TreeMap<>();
    for (int i = 0; i < story.size(); i++) {
      byInstance.put(FleetSimulation.instanceName(i), new java.util.ArrayList<>());
    }
    with.restarts().forEach(r -> byInstance.get(r.instance()).add("+" + GoDuration.formatMillis(r.at())
        + (r.intoOutage() ? "*" : "")));
    byInstance.forEach((instance, times) -> out.printf("  %-10s %s%n", instance,
        times.isEmpty() ? "-" : String.join(" ", times)));
  }

  private static String recovered(Outcome o, FleetStory story) {
    return o.escalated() == story.size() ? "never" : o.escalated() > 0 ? "never (" + o.escalated() + " escalated)"
        : "+" + GoDuration.formatMillis(o.allRunningAfterRecovery());
  }

  private static void row(PrintWriter out, String what, int with, int without) {
    out.printf("%-44s %18d %18d%n", what, with, without);
  }
}
