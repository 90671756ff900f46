"""What the embedded launcher leaves behind: a killed server's unix sockets are removed by the
next start, a live server's are not; ports are chosen where no client socket is handed one."""

import socket
from pathlib import Path

from sheetflow.runtime import _ephemeral_low, free_port, remove_stale_sockets


def test_a_dead_servers_socket_is_removed_and_a_live_ones_kept(tmp_path: Path):
    """A socket nothing listens on (its server was killed) goes; a listening one stays."""
    dead, live = tmp_path / "seaweedfs-x-1.sock", tmp_path / "seaweedfs-x-2.sock"
    with socket.socket(socket.AF_UNIX) as gone:
        gone.bind(str(dead))  # bound, never listening, then closed: as a SIGKILL leaves it
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(live))
        server.listen()
        remove_stale_sockets(str(tmp_path / "seaweedfs-*-*.sock"))
        assert not dead.exists() and live.exists()


def test_ports_are_chosen_below_the_ephemeral_range_with_their_neighbours_free():
    """A chosen port and its offsets lie below the range client sockets are handed ports from."""
    offsets = (1, 2, 10000)
    for _ in range(20):
        port = free_port(also_free=offsets)
        assert port + max(offsets) < _ephemeral_low()
