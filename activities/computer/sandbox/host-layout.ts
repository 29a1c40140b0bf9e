// What of the host the sandbox shows, read once per process: /usr read-only, the merged-usr links
// (/bin, /lib, ... as the host has them), and a minimal /etc, an allowlist of what the usual tools
// need (the dynamic linker's cache, certificates, time zone, python's and perl's configuration,
// file's magic). Everything else of the host's /etc stays out: /etc/ssl/private, shadow, npmrc and
// pip.conf (which may hold registry tokens), the service's own configuration. passwd, group, hosts,
// hostname and nsswitch.conf are the sandbox's own, written to a private folder of the worker.
import fs from 'node:fs';
import path from 'node:path';

/** One path of the sandbox's root: a read-only bind of the same host path, or a symbolic link. */
export type RootEntry = { path: string; bind: string } | { path: string; symlink: string };

export interface HostLayout {
  /** /usr, the merged-usr links, then /etc's allowed entries, in mount order. */
  entries: RootEntry[];
  /** Entries of /proc covered read-only: sysctls (see docs/computer.md, "Threat model") and other writable knobs. */
  procCovers: string[];
}

/** Top-level folders that merged-usr systems link into /usr; bound read-only where they are real folders. */
const ROOT_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The host's /etc entries the sandbox may see (names; a trailing * matches a prefix). */
export const ETC_ALLOWLIST = [
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates.conf',
  'localtime',
  'timezone',
  'os-release',
  'debian_version',
  'protocols',
  'services',
  'mime.types',
  'magic',
  'magic.mime',
  'python3*',
  'perl',
  'inputrc',
  'gai.conf',
  'host.conf',
];

/**
 * /proc entries that a process of the sandbox could write because, on the host, it has the
 * worker's uid (root here, without any capability): /proc/sys/kernel/core_pattern among them,
 * which would run a program of its choosing as root. bwrap covers /proc/sys only when the folder
 * itself is writable, which it is not (0555), hence our own covers.
 */
const PROC_COVERS = ['/proc/sys', '/proc/sysrq-trigger', '/proc/mtrr', '/proc/irq', '/proc/bus'];

/** Files of the sandbox's own /etc: the agent's user (uid and gid inside), its home /workspace. */
export function generatedEtc(uid: number, gid: number): Record<string, string> {
  return {
    passwd: `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nagent:x:${uid}:${gid}:agent:/workspace:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\nagent:x:${gid}:\nnogroup:x:65534:\n`,
    hosts: '127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n',
    hostname: 'sandbox\n',
    'nsswitch.conf':
      'passwd: files\ngroup: files\nshadow: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n',
  };
}

function expandAllowlist(etc: string): string[] {
  const names: string[] = [];
  let listing: string[] | undefined;
  for (const entry of ETC_ALLOWLIST) {
    if (!entry.endsWith('*')) {
      names.push(entry);
      continue;
    }
    listing ??= fs.readdirSync(etc);
    const prefix = entry.slice(0, -1);
    names.push(...listing.filter((n) => n.startsWith(prefix)).sort());
  }
  return names;
}

/** A host path as a root entry: a link stays a link (its target read in the sandbox), else a read-only bind; undefined when absent. */
function entryOf(hostPath: string): RootEntry | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(hostPath);
  } catch {
    return undefined;
  }
  return st.isSymbolicLink()
    ? { path: hostPath, symlink: fs.readlinkSync(hostPath) }
    : { path: hostPath, bind: hostPath };
}

/** The layout of this host (`root` only for tests: a folder standing for /). */
export function readHostLayout(root = '/'): HostLayout {
  const at = (p: string) => path.join(root, p);
  const entries: RootEntry[] = [{ path: '/usr', bind: '/usr' }];
  for (const link of ROOT_LINKS) {
    const e = entryOf(at(link));
    if (e) entries.push({ ...e, path: link, ...('bind' in e ? { bind: link } : {}) });
  }
  for (const name of expandAllowlist(at('/etc'))) {
    const e = entryOf(at(`/etc/${name}`));
    if (e) entries.push({ ...e, path: `/etc/${name}`, ...('bind' in e ? { bind: `/etc/${name}` } : {}) });
  }
  const procCovers = PROC_COVERS.filter((p) => fs.existsSync(at(p)));
  return { entries, procCovers };
}
