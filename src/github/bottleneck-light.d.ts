/**
 * bottleneck's light build (no Redis clustering): the one @octokit/plugin-throttling and
 * @octokit/plugin-retry load, with the full build's types (the package ships none for it).
 */
declare module 'bottleneck/light.js' {
  import Bottleneck from 'bottleneck';
  export default Bottleneck;
}
