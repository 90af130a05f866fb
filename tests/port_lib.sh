# Sourced by the shell tests that start servers of their own (ranks'
# rendezvous, Slurm's daemons): not run.

# free_port: a free loopback port below the kernel's ephemeral range. A
# client may dial the port before its server listens (rank 1 before rank
# 0's store, slurmd before slurmctld); inside the ephemeral range such a
# dial can be given that same port as its source and connect to itself
# (TCP simultaneous open), and other tests' outgoing connections take
# ports from there too. tests/free_port.h does the same for the C++ tests.
free_port() {
  python3 - <<'PY'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(1000):
    port = random.randrange(10000, max(11000, low))
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
    print(port)
    break
else:
    raise SystemExit("no free loopback port below %d" % low)
PY
}
