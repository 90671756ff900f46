"""The supervisor behind `sheetflow up/run`: a process that dies is reaped, reported and
restarted after a backoff; one that keeps dying stops the stack with its name and log."""

import sys
from pathlib import Path

import pytest

from sheetflow.runtime import (
    NATS_WRITE_FAILED,
    CrashLoop,
    LogWatch,
    ManagedProcess,
    Supervisor,
    spawn,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def short_lived(log_dir: Path, name: str = "worker-1") -> ManagedProcess:
    """A process that says something and exits 3 at once; its restart is another one."""
    code = "import sys; print('worker says goodbye', flush=True); sys.exit(3)"
    proc = spawn(name, [sys.executable, "-c", code], log_dir=log_dir)
    proc.restart = lambda: short_lived(log_dir, name)
    return proc


def wait_exit(proc: ManagedProcess) -> None:
    proc.popen.wait(10)


def test_a_dead_process_is_reaped_and_restarted_after_its_backoff(tmp_path):
    clock, said = Clock(), list[str]()
    supervisor = Supervisor(limit=3, window_s=60, backoff_s=1, say=said.append, clock=clock)
    first = short_lived(tmp_path)
    supervisor.watch([first])
    wait_exit(first)
    supervisor.check()
    assert first.stopped and first.popen.returncode == 3  # reaped, not a zombie
    assert said == [
        (
            "worker-1 exited unexpectedly (code 3); restarting it in 1 s (crash 1 of 3 "
            "allowed within 60 s)"
        )
    ]
    supervisor.check()
    assert supervisor.processes == [first], "restarted before its backoff was over"
    clock.now += 1.0
    supervisor.check()
    [second] = supervisor.processes
    assert second is not first and said[-1] == f"worker-1 restarted (pid {second.pid})"
    wait_exit(second)
    supervisor.check()
    assert "restarting it in 2 s (crash 2 of 3" in said[-1]  # the backoff doubles
    supervisor.stop()


def test_crashes_past_the_limit_within_the_window_stop_with_the_name_and_log(tmp_path):
    clock = Clock()
    supervisor = Supervisor(limit=2, window_s=60, backoff_s=1, say=lambda line: None, clock=clock)
    supervisor.watch([short_lived(tmp_path)])
    with pytest.raises(CrashLoop) as stopped:
        for _ in range(20):
            wait_exit(supervisor.processes[0])
            clock.now += 5
            supervisor.check()
            supervisor.check()
    message = str(stopped.value)
    assert message.startswith("worker-1 exited unexpectedly (code 3): 3 crash(es) within 60 s")
    assert "worker says goodbye" in message and "worker-1.log" in message
    supervisor.stop()


def test_crashes_further_apart_than_the_window_never_add_up(tmp_path):
    clock, said = Clock(), list[str]()
    supervisor = Supervisor(limit=1, window_s=60, backoff_s=1, say=said.append, clock=clock)
    supervisor.watch([short_lived(tmp_path)])
    for _ in range(4):
        wait_exit(supervisor.processes[0])
        supervisor.check()
        clock.now += 61
        supervisor.check()
    assert sum("restarted" in line for line in said) == 4
    assert all("crash 1 of 1" in line for line in said if "restarting" in line)
    supervisor.stop()


def long_lived(log_dir: Path, name: str = "nats-1") -> ManagedProcess:
    """A process that runs until stopped; its restart is another one."""
    proc = spawn(name, [sys.executable, "-c", "import time; time.sleep(60)"], log_dir=log_dir)
    proc.restart = lambda: long_lived(log_dir, name)
    return proc


def test_a_stuck_process_is_restarted_at_once_and_not_counted_as_a_crash(tmp_path):
    """A live process that says it is stuck (a NATS store after a full disk) is stopped and
    started again at once, with the reason said; its crash allowance is untouched."""
    said: list[str] = []
    supervisor = Supervisor(limit=0, window_s=60, say=said.append, clock=Clock())
    first = long_lived(tmp_path)
    first.stuck = lambda: "stopped storing after a failed write"
    supervisor.watch([first])
    supervisor.check()
    [second] = supervisor.processes
    assert first.stopped and second is not first and second.alive()
    assert said[0] == "nats-1 stopped storing after a failed write; restarting it"
    assert said[1] == f"nats-1 restarted (pid {second.pid})"
    supervisor.check()  # the new process is not stuck (no such check): left running
    assert supervisor.processes == [second]
    supervisor.stop()


def test_a_log_watch_sees_a_line_written_after_it_began(tmp_path):
    """Only what the log says after the watch began counts (a restart appends to it)."""
    log = tmp_path / "nats.log"
    log.write_bytes(b"[ERR] Critical write error: old\n")
    watch = LogWatch(log, log.stat().st_size, NATS_WRITE_FAILED)
    assert not watch.seen()
    with log.open("ab") as out:
        out.write(b"[ERR] Filestore [KV_x] Critical write error: no space left on device\n")
    assert watch.seen()
