#!/usr/bin/env python3
"""A complete (toy) agent using respawn_agent: four steps, a checkpoint per step, heartbeats all along,
and one restart it asks for after changing its own tools. Run it in a Respawn pod next to
respawn_agent.py; EXAMPLE_STEP_SECONDS sets how long each step "works" (default 5)."""

import os
import sys
import time

from respawn_agent import Agent, RespawnError

STEPS = ["clone", "plan", "implement", "test"]


def work(step):
    time.sleep(float(os.environ.get("EXAMPLE_STEP_SECONDS", "5")))  # tool calls, model calls, ...


def main():
    agent = Agent()
    # a later run: was it the restart this agent asked for? (the Lease remembers; the pod does not)
    reloaded = int(agent.run or "1") > 1 and agent.verify_restarted(since=0)["restarted"]
    # after a failure Respawn may hand us the step to resume from
    resume = os.environ.get("RESPAWN_RESUME_CHECKPOINT")
    first = STEPS.index(resume) if resume in STEPS else 0
    with agent.heartbeats(period=10):
        for step in STEPS[first:]:
            agent.checkpoint(step, status="in_progress", idempotent=True)
            print("step", step, flush=True)
            work(step)
            if step == "implement" and not reloaded:
                agent.request_restart("load the tools the agent just changed")  # exits 42
        agent.checkpoint(STEPS[-1], status="complete")
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RespawnError as e:
        print("agent: %s" % e, file=sys.stderr)
        sys.exit(1)  # a failure: Respawn retries it with the policy's backoff
