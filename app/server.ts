/** Entry point of `npm run app`: the Consort GitHub App as a server. */
import { main } from './start.js';

await main(process.env);
