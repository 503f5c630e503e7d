/**
 * The slice of the Databricks Postgres API (Lakebase Autoscaling) that Consort calls, written down
 * as an OpenAPI 3.0 description so `OpenApiChecker` can hold both Consort's requests and the
 * stand-in's answers to it. Transcribed from the Databricks SDKs' generated `postgres` service
 * (databricks-sdk-py `databricks/sdk/service/postgres.py`: PostgresAPI.create_branch, delete_branch,
 * get_branch, list_branches, create_endpoint, list_endpoints, generate_database_credential,
 * get_operation, get_project, and the dataclasses Branch, BranchSpec, BranchStatus, Endpoint,
 * EndpointSpec, EndpointStatus, EndpointHosts, Operation, Project, ProjectStatus, DatabaseCredential).
 * No Databricks SDK with this service is published on npm (`@databricks/sdk-experimental` 0.17 has
 * no `postgres` service; `@databricks/lakebase` 0.6 types only the credential call, as here), so
 * the field lists live here; every object is closed (`additionalProperties: false`), so a misspelt
 * or invented field is an error. An error answer is `{ error_code, message, details? }`, the shape
 * `@databricks/sdk-experimental`'s apierr.js requires before it reads a body as an API error.
 */
import type { OpenApiDoc } from './openapi.js';

const str = { type: 'string' };
const bool = { type: 'boolean' };
const num = { type: 'number' };
const int = { type: 'integer' };
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const closed = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length ? { required } : {}),
});
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const q = (name: string, schema: unknown, required = false) => ({ name, in: 'query', required, schema });

const branchState = { type: 'string', enum: ['ARCHIVED', 'DELETED', 'IMPORTING', 'INIT', 'READY', 'RESETTING'] };
const endpointType = { type: 'string', enum: ['ENDPOINT_TYPE_READ_ONLY', 'ENDPOINT_TYPE_READ_WRITE'] };
const endpointState = { type: 'string', enum: ['ACTIVE', 'DEGRADED', 'IDLE', 'INIT'] };
const op = json(ref('Operation'));
const failed = json(ref('Error'));

export const LAKEBASE_API: OpenApiDoc = {
  paths: {
    '/projects/{project}': {
      get: { operationId: 'GetProject', responses: { 200: json(ref('Project')), default: failed } },
    },
    '/projects/{project}/branches': {
      get: {
        operationId: 'ListBranches',
        parameters: [q('page_size', int), q('page_token', str), q('show_deleted', bool)],
        responses: { 200: json(ref('ListBranchesResponse')), default: failed },
      },
      post: {
        operationId: 'CreateBranch',
        parameters: [
          q('branch_id', { type: 'string', pattern: '^[a-z][a-z0-9-]{0,62}$' }, true),
          q('replace_existing', bool),
        ],
        requestBody: json(ref('Branch')),
        responses: { 200: op, default: failed },
      },
    },
    '/projects/{project}/branches/{branch}': {
      get: { operationId: 'GetBranch', responses: { 200: json(ref('Branch')), default: failed } },
      delete: {
        operationId: 'DeleteBranch',
        parameters: [q('allow_missing', bool), q('purge', bool)],
        responses: { 200: op, default: failed },
      },
    },
    '/projects/{project}/branches/{branch}/endpoints': {
      get: {
        operationId: 'ListEndpoints',
        parameters: [q('page_size', int), q('page_token', str)],
        responses: { 200: json(ref('ListEndpointsResponse')), default: failed },
      },
      post: {
        operationId: 'CreateEndpoint',
        parameters: [q('endpoint_id', str, true), q('replace_existing', bool)],
        requestBody: json(ref('Endpoint')),
        responses: { 200: op, default: failed },
      },
    },
    '/projects/{project}/branches/{branch}/operations/{operation}': {
      get: { operationId: 'GetOperation', responses: { 200: op, default: failed } },
    },
    '/projects/{project}/branches/{branch}/endpoints/{endpoint}/operations/{operation}': {
      get: { operationId: 'GetOperation', responses: { 200: op, default: failed } },
    },
    // Workspace calls outside the Postgres API, as @databricks/sdk-experimental makes them: who the
    // token belongs to (iam CurrentUser.me, `User.userName`, the Postgres role of a PAT's owner) and
    // the OAuth M2M token (config/oauth/Client.exchangeToken: a form with grant_type=client_credentials
    // and scope=all-apis, the client's id and secret in a Basic header; the answer needs
    // access_token and expires_in).
    '/api/2.0/preview/scim/v2/Me': {
      get: {
        operationId: 'CurrentUserMe',
        responses: {
          200: json({
            type: 'object',
            properties: { userName: str, id: str, displayName: str, active: bool, schemas: { type: 'array' } },
          }),
          default: failed,
        },
      },
    },
    '/oidc/v1/token': {
      post: {
        operationId: 'ExchangeToken',
        requestBody: {
          content: {
            'application/x-www-form-urlencoded': {
              schema: closed({ grant_type: { type: 'string', enum: ['client_credentials'] }, scope: str }, [
                'grant_type',
              ]),
            },
          },
        },
        responses: {
          200: json({
            type: 'object',
            required: ['access_token', 'expires_in'],
            properties: { access_token: str, token_type: str, expires_in: int, scope: str },
          }),
        },
      },
    },
    '/credentials': {
      post: {
        operationId: 'GenerateDatabaseCredential',
        requestBody: json(
          closed(
            {
              endpoint: { type: 'string', pattern: '^projects/[^/]+/branches/[^/]+/endpoints/[^/]+$' },
              claims: { type: 'array' },
              expire_time: str,
              group_name: str,
              ttl: str,
            },
            ['endpoint'],
          ),
        ),
        responses: { 200: json(closed({ token: str, expire_time: str })), default: failed },
      },
    },
  },
  components: {
    schemas: {
      Branch: closed({
        branch_id: str,
        create_time: str,
        name: str,
        parent: str,
        spec: ref('BranchSpec'),
        status: ref('BranchStatus'),
        uid: str,
        update_time: str,
      }),
      BranchSpec: closed({
        expire_time: str,
        is_protected: bool,
        no_expiry: bool,
        source_branch: { type: 'string', pattern: '^projects/[^/]+/branches/[^/]+$' }, // a resource name
        source_branch_lsn: str,
        source_branch_time: str,
        source_snapshot: str,
        ttl: { type: 'string', pattern: '^\\d+(\\.\\d+)?s$' }, // a protobuf Duration in JSON
      }),
      BranchStatus: closed({
        branch_id: str,
        current_state: branchState,
        default: bool,
        delete_time: str,
        expire_time: str,
        is_protected: bool,
        logical_size_bytes: int,
        pending_state: branchState,
        purge_time: str,
        source_branch: str,
        source_branch_lsn: str,
        source_branch_time: str,
        source_recovery_branch: str,
        source_snapshot: str,
        state_change_time: str,
      }),
      ListBranchesResponse: closed({ branches: { type: 'array', items: ref('Branch') }, next_page_token: str }),
      Endpoint: closed({
        create_time: str,
        endpoint_id: str,
        name: str,
        parent: str,
        spec: ref('EndpointSpec'),
        status: ref('EndpointStatus'),
        uid: str,
        update_time: str,
      }),
      EndpointSpec: closed(
        {
          endpoint_type: endpointType,
          autoscaling_limit_max_cu: num,
          autoscaling_limit_min_cu: num,
          disabled: bool,
          group: { type: 'object' },
          no_suspension: bool,
          settings: { type: 'object' },
          suspend_timeout_duration: str,
        },
        ['endpoint_type'],
      ),
      EndpointStatus: closed({
        autoscaling_limit_max_cu: num,
        autoscaling_limit_min_cu: num,
        current_state: endpointState,
        disabled: bool,
        endpoint_id: str,
        endpoint_type: endpointType,
        group: { type: 'object' },
        hosts: ref('EndpointHosts'),
        last_active_time: str,
        pending_state: endpointState,
        settings: { type: 'object' },
        suspend_timeout_duration: str,
      }),
      EndpointHosts: closed({
        host: str,
        read_only_host: str,
        read_only_pooled_host: str,
        read_write_pooled_host: str,
      }),
      ListEndpointsResponse: closed({ endpoints: { type: 'array', items: ref('Endpoint') }, next_page_token: str }),
      // An HTTP error's body: the SDKs read it as an API error only when it has both (apierr's parseErrorFromResponse).
      Error: closed({ error_code: str, message: str, details: { type: 'array' } }, ['error_code', 'message']),
      Operation: closed({
        done: bool,
        error: closed({ details: { type: 'array' }, error_code: str, message: str, stack_trace: str }),
        metadata: { type: 'object' },
        name: str,
        response: { type: 'object' }, // polymorphic: the created resource
      }),
      Project: closed({
        create_time: str,
        delete_time: str,
        initial_branch_spec: { type: 'object' },
        initial_database_spec: { type: 'object' },
        initial_endpoint_spec: { type: 'object' },
        initial_role_spec: { type: 'object' },
        name: str,
        project_id: str,
        purge_time: str,
        spec: { type: 'object' },
        status: ref('ProjectStatus'),
        uid: str,
        update_time: str,
      }),
      ProjectStatus: closed({
        branch_logical_size_limit_bytes: int,
        budget_policy_id: str,
        compute_last_active_time: str,
        compute_provisioner: str,
        custom_tags: { type: 'array' },
        default_branch: str,
        default_endpoint_settings: { type: 'object' },
        display_name: str,
        enable_pg_native_login: bool,
        history_retention_duration: str,
        owner: str,
        pg_version: int,
        project_id: str,
        replication_role: str,
        synthetic_storage_size_bytes: int,
      }),
    },
  },
};
