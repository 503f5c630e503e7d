import { runPost } from './reflink.js';

await runPost();
