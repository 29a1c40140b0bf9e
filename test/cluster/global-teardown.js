// Takes the cluster pass's own cluster down (one CLUSTER_DIR named is left up).
require('../../bin/register-ts.js');
const { down } = require('../../src/dev/cluster/topology');

module.exports = async function globalTeardown() {
  if (process.env.CLUSTER_PASS_OWNS === '1' && process.env.CLUSTER_DIR) await down(process.env.CLUSTER_DIR);
};
