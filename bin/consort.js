#!/usr/bin/env node
import { main } from '../lib/cli/main.js';

await main();
