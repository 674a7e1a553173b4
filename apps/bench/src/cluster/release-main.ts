import { readFileSync } from 'node:fs';
import { releaseResources, type ClusterResources } from './cluster-resources.js';

/** `release-main.js < resources.json`: the cleanup of a cluster run that ended early (see releaseOnExit). */
const resources = JSON.parse(readFileSync(0, 'utf8')) as ClusterResources;
for (const problem of await releaseResources(resources)) console.error(problem);
