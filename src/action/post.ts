/**
 * The post step (action.yml `runs.post`), at the end of every job that used the Action: nothing to
 * do unless the main step mounted something, so only then is the rest of it loaded.
 */
import * as core from '@actions/core';
import { STATE } from './state.js';

if (core.getState(STATE.reflinkMount)) await (await import('./reflink.js')).runPost();
