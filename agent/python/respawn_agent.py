#!/usr/bin/env python3
"""The agent's side of Respawn: heartbeats, checkpoints and "restart me", from inside the agent's pod.

Standard library only (Python 3.8+): copy this file into your agent image or vendor it. It talks to
the Kubernetes API with the pod's service account and needs only what the examples' Role grants:
get, update and patch on the instance's heartbeat Lease.

    from respawn_agent import Agent
    agent = Agent()                               # RESPAWN_* env (RESPAWN_POD_NAME: the holder), the service account
    with agent.heartbeats(period=10):             # renews the Lease every 10 s in the background
        agent.checkpoint("step-3", status="in_progress", idempotent=True)
        ...
        agent.request_restart("load the new tool code")   # exit code 42: restarted, not a failure

In the next run:  agent.verify_restarted(since)  ->  {"restarted": True, "reason": ..., ...}

The same from a shell: python3 respawn_agent.py heartbeat|checkpoint|request-restart|verify-restarted ...
(python3 respawn_agent.py --help). The contract (api.md §5, §3 step 3): the Lease named RESPAWN_LEASE_NAME,
spec.holderIdentity = this pod's name, spec.renewTime = now; annotations respawn.dev/health, detail,
checkpoint, checkpoint-status, step-idempotent, artifacts-ready.
"""

import argparse
import contextlib
import datetime
import json
import os
import ssl
import sys
import threading
import urllib.error
import urllib.request

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
HEALTH = "respawn.dev/health"
DETAIL = "respawn.dev/detail"
CHECKPOINT = "respawn.dev/checkpoint"
CHECKPOINT_STATUS = "respawn.dev/checkpoint-status"
STEP_IDEMPOTENT = "respawn.dev/step-idempotent"
ARTIFACTS_READY = "respawn.dev/artifacts-ready"
# where request_restart leaves its mark for verify_restarted in the next run (the Lease outlives the pod)
RESTART_REQUESTED_AT = "agent.respawn.dev/restart-requested-at"
RESTART_REQUESTED_BY = "agent.respawn.dev/restart-requested-by"
RESTART_REASON = "agent.respawn.dev/restart-reason"

VERDICTS = ("Healthy", "Stalled", "Crashed", "Ambiguous")
CHECKPOINT_STATUSES = ("in_progress", "failed", "complete")
DETAIL_BYTES = 512
CHECKPOINT_BYTES = 256
TERMINATION_MESSAGE_BYTES = 4096
DEFAULT_RESTART_EXIT_CODE = 42


class RespawnError(Exception):
    """Anything the helper could not do, with a message that says what and what to check."""


class InvalidValue(RespawnError):
    """A value the contract does not allow (a verdict, a checkpoint status, a length)."""


class LeaseNotFound(RespawnError):
    """The heartbeat Lease does not exist (yet)."""


class Forbidden(RespawnError):
    """The service account may not do this (401 or 403)."""


class Conflict(RespawnError):
    """The Lease kept changing under every retry (409)."""


class ApiUnreachable(RespawnError):
    """The API server did not answer, or answered something unexpected."""


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc)


def micro_time(t):
    """Kubernetes MicroTime: RFC 3339 with microseconds, in UTC."""
    return t.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text):
    """An RFC 3339 time (as Kubernetes writes it), or seconds since the epoch."""
    text = str(text).strip()
    try:
        return datetime.datetime.fromtimestamp(float(text), datetime.timezone.utc)
    except ValueError:
        pass
    value = text[:-1] + "+00:00" if text.endswith("Z") else text
    if "." in value:  # Python 3.8 takes at most 6 fraction digits
        head, _, rest = value.partition(".")
        digits = "".join(c for c in rest if c.isdigit())
        value = head + "." + (digits[:6].ljust(6, "0")) + rest[len(digits):]
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise InvalidValue("not a time: %r (RFC 3339, e.g. 2026-11-24T10:00:00Z, or seconds since the epoch)"
                           % text) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


def _bounded(name, value, limit):
    if value is not None and len(value.encode("utf-8")) > limit:
        raise InvalidValue("%s is %d bytes, at most %d allowed" % (name, len(value.encode("utf-8")), limit))
    return value


def _truncate(value, limit):
    data = value.encode("utf-8")[:limit]
    return data.decode("utf-8", errors="ignore")


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


class Agent:
    """One agent run: its Lease, its pod, the API server it reaches with its service account."""

    def __init__(self, api_url=None, token=None, namespace=None, lease_name=None, pod_name=None, ca_file=None,
                 termination_log=None, retries=5, timeout=10.0, env=None):
        env = os.environ if env is None else env
        self.api_url = (api_url or env.get("RESPAWN_API_URL") or self._in_cluster_url(env) or "").rstrip("/")
        token_file = env.get("RESPAWN_TOKEN_FILE", SERVICE_ACCOUNT + "/token")
        self.token = token if token is not None else env.get("RESPAWN_TOKEN") or _read(token_file)
        self.namespace = namespace or env.get("RESPAWN_NAMESPACE") or _read(SERVICE_ACCOUNT + "/namespace")
        self.lease_name = lease_name or env.get("RESPAWN_LEASE_NAME") or env.get("RESPAWN_INSTANCE")
        self.pod_name = pod_name or env.get("RESPAWN_POD_NAME") or env.get("POD_NAME") or env.get("HOSTNAME")
        self.run = env.get("RESPAWN_RUN")
        self.termination_log = termination_log or env.get("RESPAWN_TERMINATION_LOG", "/dev/termination-log")
        self.retries = retries
        self.timeout = timeout
        missing = [name for name, value in (("the API server URL (RESPAWN_API_URL or KUBERNETES_SERVICE_HOST)",
                                              self.api_url), ("the namespace (RESPAWN_NAMESPACE or the service "
                                              "account's namespace file)", self.namespace),
                                             ("the Lease name (RESPAWN_LEASE_NAME)", self.lease_name),
                                             ("the pod name (RESPAWN_POD_NAME, POD_NAME or HOSTNAME)", self.pod_name)) if not value]
        if missing:
            raise RespawnError("cannot reach the heartbeat Lease: missing " + ", ".join(missing)
                               + "; inside a Respawn pod these come from the RESPAWN_* env and the service account")
        self._context = None
        if self.api_url.startswith("https://"):
            ca = ca_file or env.get("RESPAWN_CA_FILE", SERVICE_ACCOUNT + "/ca.crt")
            self._context = ssl.create_default_context(cafile=ca if os.path.exists(ca) else None)

    @staticmethod
    def _in_cluster_url(env):
        host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT", "443")
        if not host:
            return None
        return "https://[%s]:%s" % (host, port) if ":" in host else "https://%s:%s" % (host, port)

    # -- what an agent calls ------------------------------------------------------------------------

    def heartbeat(self, verdict="Healthy", detail=None):
        """Renews the Lease: holderIdentity = this pod, renewTime = now, the verdict and its detail
        (Healthy | Stalled | Crashed | Ambiguous; a detail over 512 bytes is cut at a character)."""
        if verdict not in VERDICTS:
            raise InvalidValue("verdict %r is not one of %s" % (verdict, ", ".join(VERDICTS)))
        notes = {HEALTH: verdict}
        notes[DETAIL] = None if detail is None else _truncate(str(detail), DETAIL_BYTES)
        return self._renew(notes)

    def checkpoint(self, checkpoint_id, status="in_progress", idempotent=True, artifacts_ready=True):
        """Reports the step the agent is in, for a resume after a failure (api.md §7); renews the Lease too."""
        if not checkpoint_id:
            raise InvalidValue("a checkpoint needs an id")
        _bounded("checkpoint id", checkpoint_id, CHECKPOINT_BYTES)
        if status not in CHECKPOINT_STATUSES:
            raise InvalidValue("checkpoint status %r is not one of %s" % (status, ", ".join(CHECKPOINT_STATUSES)))
        return self._renew({CHECKPOINT: checkpoint_id, CHECKPOINT_STATUS: status,
                            STEP_IDEMPOTENT: "true" if idempotent else "false",
                            ARTIFACTS_READY: "true" if artifacts_ready else "false"})

    def request_restart(self, reason, exit_code=None):
        """Asks Respawn for a restart of this agent: marks the Lease (for verify_restarted in the next
        run), writes the reason as the termination message and exits with the policy's
        restartRequestExitCode (RESPAWN_RESTART_EXIT_CODE, default 42). Never returns."""
        code = exit_code if exit_code is not None else int(os.environ.get("RESPAWN_RESTART_EXIT_CODE",
                                                                           DEFAULT_RESTART_EXIT_CODE))
        if not 1 <= code <= 255:
            raise InvalidValue("exit code %d is outside 1..255" % code)
        reason = _truncate(str(reason or "restart requested"), TERMINATION_MESSAGE_BYTES)
        try:
            self.mark_restart(reason)
        except RespawnError as e:  # the restart itself needs only the exit code: go on
            print("respawn_agent: the restart request is not recorded on the Lease, verify_restarted will not "
                  "see it: %s" % e, file=sys.stderr)
        try:
            with open(self.termination_log, "w", encoding="utf-8") as f:
                f.write(reason)
        except OSError as e:
            print("respawn_agent: could not write the termination message to %s (%s); the restart is still "
                  "not a failure" % (self.termination_log, e), file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        raise SystemExit(code)

    def mark_restart(self, reason):
        """Records on the Lease that this run asks for a restart now, and why."""
        return self._renew({RESTART_REQUESTED_AT: micro_time(now_utc()), RESTART_REQUESTED_BY: self.pod_name,
                            RESTART_REASON: _truncate(reason, DETAIL_BYTES)})

    def verify_restarted(self, since):
        """Whether this agent was restarted, at its own request, after `since` (a datetime, an RFC 3339
        string or epoch seconds): a run other than this one marked the Lease after `since`."""
        since_time = since if isinstance(since, datetime.datetime) else parse_time(since)
        notes = (self._get().get("metadata") or {}).get("annotations") or {}
        requested_at = notes.get(RESTART_REQUESTED_AT)
        by = notes.get(RESTART_REQUESTED_BY)
        result = {"restarted": False, "current_pod": self.pod_name, "run": self.run, "previous_pod": by,
                  "reason": notes.get(RESTART_REASON), "requested_at": requested_at}
        if requested_at is None:
            result["error"] = "no restart request is recorded on Lease %s/%s" % (self.namespace, self.lease_name)
            return result
        at = parse_time(requested_at)
        result["seconds_since_request"] = round((now_utc() - at).total_seconds(), 3)
        if at < since_time:
            result["error"] = "the last restart request (%s) is older than %s" % (requested_at, micro_time(since_time))
        elif by == self.pod_name:
            result["error"] = "this run (%s) asked for the restart and has not been replaced yet" % by
        else:
            result["restarted"] = True
        return result

    @contextlib.contextmanager
    def heartbeats(self, period=10.0, verdict="Healthy"):
        """Renews the Lease now and every `period` seconds in a daemon thread while the block runs;
        a failed renewal is printed to stderr and retried at the next period."""
        stop = threading.Event()

        def beat():
            while True:
                try:
                    self.heartbeat(verdict)
                except RespawnError as e:
                    print("respawn_agent: heartbeat failed: %s" % e, file=sys.stderr)
                if stop.wait(period):
                    return

        thread = threading.Thread(target=beat, name="respawn-heartbeat", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join(timeout=self.timeout)

    # -- the Lease through the Kubernetes API ---------------------------------------------------------

    def _lease_path(self):
        return "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (self.namespace, self.lease_name)

    def _renew(self, notes):
        """GET, change, PUT with the resourceVersion read; on a conflict read again (bounded)."""
        for _ in range(self.retries):
            lease = self._get()
            spec = lease.setdefault("spec", {})
            now = micro_time(now_utc())
            if spec.get("holderIdentity") != self.pod_name:
                if spec.get("holderIdentity"):
                    spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
                spec["holderIdentity"] = self.pod_name
                spec["acquireTime"] = now
            spec["renewTime"] = now
            metadata = lease.setdefault("metadata", {})
            annotations = metadata.get("annotations") or {}
            for key, value in notes.items():
                if value is None:
                    annotations.pop(key, None)
                else:
                    annotations[key] = value
            metadata["annotations"] = annotations
            try:
                return self._request("PUT", self._lease_path(), lease)
            except Conflict:
                continue
        raise Conflict("Lease %s/%s changed under each of %d attempts to update it (409 Conflict); another "
                       "writer holds it: is a second process of this agent renewing it?"
                       % (self.namespace, self.lease_name, self.retries))

    def _get(self):
        return self._request("GET", self._lease_path())

    def _request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.api_url + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", "respawn-agent/python")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self._context) as response:
                return json.loads(response.read().decode("utf-8") or "{}")
        except urllib.error.HTTPError as e:
            raise self._error(method, e) from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise ApiUnreachable("%s %s%s failed: %s" % (method, self.api_url, path, e)) from None

    def _error(self, method, e):
        verb = {"GET": "get", "PUT": "update"}.get(method, method.lower())
        where = "Lease %s/%s" % (self.namespace, self.lease_name)
        try:
            message = json.loads(e.read().decode("utf-8")).get("message", "")
        except (ValueError, AttributeError, OSError):
            message = ""
        detail = (": " + message) if message else ""
        if e.code == 404:
            return LeaseNotFound("%s does not exist%s. The operator creates it right after the first run's pod; "
                                 "if this lasts, check RESPAWN_LEASE_NAME and the namespace" % (where, detail))
        if e.code in (401, 403):
            return Forbidden("%d: the service account may not %s %s%s. The agent's Role needs: apiGroups "
                             "[coordination.k8s.io], resources [leases], resourceNames [%s], verbs [get, update, "
                             "patch] (see examples/)" % (e.code, verb, where, detail, self.lease_name))
        if e.code == 409:
            return Conflict("%s was changed by someone else meanwhile (409)%s" % (where, detail))
        return ApiUnreachable("%s %s: the API server answered %d%s" % (verb, where, e.code, detail))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="respawn_agent.py", description="Heartbeats, checkpoints and restart "
                                     "requests of a Respawn agent, from inside its pod (RESPAWN_* env, the "
                                     "service account).")
    commands = parser.add_subparsers(dest="command", required=True)
    beat = commands.add_parser("heartbeat", help="renew the heartbeat Lease")
    beat.add_argument("--verdict", default="Healthy", choices=VERDICTS)
    beat.add_argument("--detail", help="what the agent is doing (at most 512 bytes kept)")
    ckpt = commands.add_parser("checkpoint", help="report the current step's checkpoint")
    ckpt.add_argument("id")
    ckpt.add_argument("--status", default="in_progress", choices=CHECKPOINT_STATUSES)
    ckpt.add_argument("--not-idempotent", action="store_true", help="the step must not run twice")
    ckpt.add_argument("--artifacts-missing", action="store_true", help="its runtime artifacts are not ready")
    restart = commands.add_parser("request-restart", help="ask for a restart: termination message and exit code")
    restart.add_argument("--reason", required=True)
    restart.add_argument("--exit-code", type=int, help="the policy's restartRequestExitCode (default "
                         "RESPAWN_RESTART_EXIT_CODE or 42)")
    verify = commands.add_parser("verify-restarted", help="did a restart asked for after --since happen?")
    verify.add_argument("--since", required=True, help="RFC 3339 time or seconds since the epoch")
    args = parser.parse_args(argv)
    try:
        agent = Agent()
        if args.command == "heartbeat":
            agent.heartbeat(args.verdict, args.detail)
        elif args.command == "checkpoint":
            agent.checkpoint(args.id, args.status, not args.not_idempotent, not args.artifacts_missing)
        elif args.command == "request-restart":
            agent.request_restart(args.reason, args.exit_code)
        else:
            result = agent.verify_restarted(args.since)
            print(json.dumps(result, indent=2, sort_keys=True))
            return 0 if result["restarted"] else 1
        return 0
    except RespawnError as e:
        print("respawn_agent: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
