// Brings the cluster of the cluster pass up (jest.cluster.config.js), unless CLUSTER_DIR names one
// that is up, and tells the test files where it is (CLUSTER_DIR, inherited by jest's workers).
require('../../bin/register-ts.js');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { killCluster, up } = require('../../src/dev/cluster/topology');
const { readState } = require('../../src/dev/cluster/state');
const { isAlive } = require('../../src/dev/cluster/detached');
const { clusterTestEnv } = require('./cluster-env');

module.exports = async function globalSetup() {
  const given = process.env.CLUSTER_DIR && readState(process.env.CLUSTER_DIR);
  if (given && given.nodes.every((n) => isAlive(n.pid))) {
    process.stderr.write(`\ncluster pass: using the cluster up in ${process.env.CLUSTER_DIR}\n`);
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aes-cluster-'));
  process.env.CLUSTER_DIR = dir;
  process.env.CLUSTER_PASS_OWNS = '1';
  // Jest ends on Ctrl-C without its teardown: the cluster's processes are detached, so nothing else would stop them.
  process.once('exit', () => killCluster(dir));
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));
  const started = Date.now();
  const log = (line) => process.stderr.write(`cluster pass: ${line}\n`);
  await up({ dir, workers: 2, gateways: 2, env: clusterTestEnv(), log });
  log(`up in ${((Date.now() - started) / 1000).toFixed(1)} s (${dir})`);
};
