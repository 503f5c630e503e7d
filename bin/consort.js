#!/usr/bin/env node
import { main } from '../lib/src/cli/main.js';

await main();
