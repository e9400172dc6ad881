"""SIGTERM (kill, a CI job's timeout) ends a command as Ctrl-C does: cleaned up, and asv too."""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tfgpubench import cli, runner


def test_sigterm_unwinds_the_command_and_exits_143(monkeypatch, capsys):
    cleaned = []

    def handler(args):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # interrupted by the signal's exception
            return 0
        finally:
            cleaned.append(True)

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=handler)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    before = signal.getsignal(signal.SIGTERM)
    assert cli.main([]) == 128 + signal.SIGTERM
    assert cleaned == [True]
    assert "terminated" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_during_asv_reaches_asv_before_tfgpubench_ends(tmp_path):
    # asv's stand-in says whether SIGTERM reached it; Ctrl-C reaches the whole process
    # group, but a SIGTERM sent to tfgpubench alone must be passed on, not left running.
    told = tmp_path / "asv-got-sigterm"
    child = ("import signal, sys, time\n"
             f"signal.signal(signal.SIGTERM, lambda *a: (open({str(told)!r}, 'w').close(),"
             " sys.exit(0)))\n"
             "print('ready', flush=True)\n"
             "time.sleep(60)")
    previous = signal.signal(signal.SIGTERM, cli._raise_terminated)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    try:
        timer.start()
        start = time.monotonic()
        with pytest.raises(runner.Terminated):
            runner.run_asv([sys.executable, "-c", child])
    finally:
        timer.cancel()
        signal.signal(signal.SIGTERM, previous)
    assert told.exists()
    assert time.monotonic() - start < 20  # not the 30 s wait for a Ctrl-C'd asv


def test_the_load_of_a_terminated_selfcheck_is_gone(tmp_path):
    # The whole command, in a process of its own: started, its load running, SIGTERM.
    code = ("import os, signal, time\n"
            "from tfgpubench import cli\n"
            "from tfgpubench.selfcheck.load import BurstyLoad\n"
            "def handler(args):\n"
            "    with BurstyLoad(busy=0.05, idle=0.05) as load:\n"
            "        print(load.process.pid, flush=True)\n"
            "        time.sleep(60)\n"
            "import argparse\n"
            "parser = argparse.ArgumentParser(); parser.set_defaults(handler=handler)\n"
            "cli.build_parser = lambda: parser\n"
            "raise SystemExit(cli.main([]))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pid = int(proc.stdout.readline())
    proc.terminate()
    assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    # Killed and reaped in the `with` block's exit, before the command returned.
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
