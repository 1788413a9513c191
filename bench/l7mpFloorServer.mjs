/**
 * A stand-in for one l7mp proxy in `bench/l7mpFanout.ts --floor-cpu-ms X`: NOT l7mp. An HTTP server on
 * HOST:PORT (the pod address the mesh gives it) that answers every request as an empty, accepting l7mp would (GET: an empty list; any
 * other method: 200), after spending X ms of its own CPU time on it. With X set to what l7mp spends per
 * call, the bench shows what a push would take if l7mp cost exactly that and nothing else: the floor
 * that the scheduling of 20 processes on this machine's cores leaves, whatever the control plane does.
 * Usage: node bench/l7mpFloorServer.mjs HOST PORT CPU_MS. Prints "listening" once bound.
 */
import http from 'node:http';

const host = process.argv[2];
const port = Number(process.argv[3]);
const cpuMs = Number(process.argv[4]);

/** Spends `ms` of this process's CPU time (not wall time: a preempted spin would cost less). */
function burn(ms) {
  const start = process.cpuUsage();
  let sink = 0;
  for (;;) {
    for (let i = 0; i < 2000; i++) sink += Math.sqrt(i + sink);
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return sink;
  }
}

const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    burn(cpuMs);
    const body = req.method === 'GET' ? '[]' : '{"status":200,"message":"OK"}';
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(port, host, () => console.log('listening'));
process.on('disconnect', () => process.exit(0));
