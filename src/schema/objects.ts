/**
 * The object kinds of a schema snapshot beyond relations and routines: extensions, collations,
 * domains, composite and range types, row-level security policies, privileges and comments.
 * Each is something `pg_dump --schema-only` prints, so a down migration that leaves one behind
 * (an extension still installed, a grant not revoked, a comment) is seen by the reversibility
 * check. Queries use catalog columns present in PG 15–18; where a column moved between versions
 * (collation locales) the row is read through `to_jsonb` so one query fits every version.
 */

export interface ExtensionInfo {
  name: string;
  version: string;
  schema: string;
}
export interface CollationInfo {
  schema: string;
  name: string;
  provider: string;
  locale: string;
  deterministic: boolean;
}
export interface DomainInfo {
  schema: string;
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  collation: string | null;
  /** `name CHECK (…)`, sorted by name. */
  constraints: string[];
}
/** Composite types list their attributes; range types their subtype and options. */
export interface TypeInfo {
  schema: string;
  name: string;
  kind: 'composite' | 'range';
  definition: string;
}
export interface PolicyInfo {
  schema: string;
  table: string;
  name: string;
  command: string;
  permissive: boolean;
  roles: string[];
  using: string | null;
  withCheck: string | null;
}
/** An object whose privileges differ from its owner's defaults, as `grantee: PRIVILEGE`, sorted. */
export interface PrivilegeInfo {
  type: string;
  identity: string;
  grants: string[];
}
export interface CommentInfo {
  type: string;
  identity: string;
  text: string;
}

export interface ExtraObjects {
  extensions: ExtensionInfo[];
  collations: CollationInfo[];
  domains: DomainInfo[];
  types: TypeInfo[];
  policies: PolicyInfo[];
  privileges: PrivilegeInfo[];
  comments: CommentInfo[];
}

/** First OID of objects created after initdb: built-ins (plpgsql, pg_catalog's comments) stay out. */
const FIRST_USER_OID = 16384;

const notExtension = (catalog: string, oid: string): string => `NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
    WHERE e.classid = '${catalog}'::regclass AND e.objid = ${oid} AND e.deptype = 'e')`;

const collationName = (
  oid: string,
): string => `(SELECT CASE WHEN cn.nspname = 'pg_catalog' THEN quote_ident(co.collname)
    ELSE quote_ident(cn.nspname) || '.' || quote_ident(co.collname) END
  FROM pg_catalog.pg_collation co JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace WHERE co.oid = ${oid})`;

/**
 * `acl` without the items an object's owner granted the non-superuser reading it: what a branch's
 * role grants its CREATEROLE admin (shareWithAdmin in src/branches/branch-role.ts).
 */
const ownAcl = (acl: string, owner: string): string =>
  `ARRAY(SELECT i FROM unnest(${acl}) i WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.aclexplode(ARRAY[i]) e
    JOIN pg_catalog.pg_roles me ON me.oid = e.grantee
    WHERE me.rolname = current_user AND NOT me.rolsuper AND e.grantor = ${owner} AND ${owner} <> me.oid))`;

export const EXTRA_SQL = {
  extensions: `SELECT x.extname::text AS name, x.extversion AS version, n.nspname::text AS schema
    FROM pg_catalog.pg_extension x JOIN pg_catalog.pg_namespace n ON n.oid = x.extnamespace
    WHERE x.oid >= ${FIRST_USER_OID} AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))`,
  collations: `SELECT n.nspname AS schema, co.collname::text AS name,
      CASE co.collprovider WHEN 'c' THEN 'libc' WHEN 'i' THEN 'icu' WHEN 'b' THEN 'builtin' ELSE 'default' END AS provider,
      concat_ws(' ', 'collate=' || (to_jsonb(co) ->> 'collcollate'), 'ctype=' || (to_jsonb(co) ->> 'collctype'),
        'locale=' || coalesce(to_jsonb(co) ->> 'colllocale', to_jsonb(co) ->> 'colliculocale'),
        'rules=' || (to_jsonb(co) ->> 'collicurules')) AS locale,
      co.collisdeterministic AS deterministic
    FROM pg_catalog.pg_collation co JOIN nsp n ON n.oid = co.collnamespace
    WHERE ${notExtension('pg_catalog.pg_collation', 'co.oid')}`,
  domains: `SELECT n.nspname AS schema, t.typname::text AS name, pg_catalog.format_type(t.typbasetype, t.typtypmod) AS type,
      t.typnotnull AS "notNull", pg_catalog.pg_get_expr(t.typdefaultbin, 0) AS default,
      CASE WHEN t.typcollation <> bt.typcollation THEN ${collationName('t.typcollation')} END AS collation,
      ARRAY(SELECT quote_ident(c.conname) || ' ' || pg_catalog.pg_get_constraintdef(c.oid) FROM pg_catalog.pg_constraint c
        WHERE c.contypid = t.oid AND c.contype = 'c') AS constraints
    FROM pg_catalog.pg_type t JOIN nsp n ON n.oid = t.typnamespace JOIN pg_catalog.pg_type bt ON bt.oid = t.typbasetype
    WHERE t.typtype = 'd' AND ${notExtension('pg_catalog.pg_type', 't.oid')}`,
  types: `SELECT n.nspname AS schema, t.typname::text AS name, CASE t.typtype WHEN 'c' THEN 'composite' ELSE 'range' END AS kind,
      CASE t.typtype WHEN 'c' THEN '(' || coalesce((SELECT string_agg(quote_ident(a.attname) || ' '
          || pg_catalog.format_type(a.atttypid, a.atttypmod)
          || CASE WHEN a.attcollation <> at.typcollation THEN ' COLLATE ' || ${collationName('a.attcollation')} ELSE '' END,
          ', ' ORDER BY a.attnum)
        FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type at ON at.oid = a.atttypid
        WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')'
      ELSE (SELECT concat_ws(', ', 'subtype = ' || pg_catalog.format_type(r.rngsubtype, NULL),
          'subtype_opclass = ' || (SELECT quote_ident(opcname) FROM pg_catalog.pg_opclass WHERE oid = r.rngsubopc),
          'collation = ' || CASE WHEN r.rngcollation <> 0 THEN ${collationName('r.rngcollation')} END,
          'canonical = ' || nullif(r.rngcanonical, 0)::regproc::text, 'subtype_diff = ' || nullif(r.rngsubdiff, 0)::regproc::text)
        FROM pg_catalog.pg_range r WHERE r.rngtypid = t.oid) END AS definition
    FROM pg_catalog.pg_type t JOIN nsp n ON n.oid = t.typnamespace
    WHERE (t.typtype = 'r' OR (t.typtype = 'c'
        AND EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid AND c.relkind = 'c')))
      AND ${notExtension('pg_catalog.pg_type', 't.oid')}`,
  policies: `SELECT n.nspname AS schema, c.relname::text AS table, x.polname::text AS name,
      CASE x.polcmd WHEN 'r' THEN 'SELECT' WHEN 'a' THEN 'INSERT' WHEN 'w' THEN 'UPDATE' WHEN 'd' THEN 'DELETE' ELSE 'ALL' END AS command,
      x.polpermissive AS permissive,
      ARRAY(SELECT CASE WHEN r = 0 THEN 'public' ELSE pg_catalog.pg_get_userbyid(r)::text END FROM unnest(x.polroles) r) AS roles,
      pg_catalog.pg_get_expr(x.polqual, x.polrelid) AS using, pg_catalog.pg_get_expr(x.polwithcheck, x.polrelid) AS "withCheck"
    FROM pg_catalog.pg_policy x JOIN pg_catalog.pg_class c ON c.oid = x.polrelid JOIN nsp n ON n.oid = c.relnamespace
    WHERE ${notExtension('pg_catalog.pg_class', 'c.oid')}`,
  // Privileges equal to the owner's defaults (never granted, or granted and revoked again) print
  // nothing in pg_dump, so only a set that differs from acldefault is reported. What a branch's role
  // grants the admin reading (a CREATEROLE admin that is no superuser, on PostgreSQL 16+: so that it
  // keeps reading the branch it handed over, src/branches/branch-role.ts) is Consort's, not the
  // project's: left out. Each branch keeps only the schemas read before it unpacks an ACL: the
  // system catalogs' own ACLs (~200 relations) were most of the query's time. The owner's own
  // entries read `(owner)` (no role's name reads so unquoted): on a branch the owner is the
  // branch's role (pr-6_role), whose name says nothing of the project and differs between branches.
  privileges: `, acls AS (
      SELECT 'pg_catalog.pg_class'::regclass AS classid, c.oid AS objid, 0 AS objsubid, ${ownAcl('c.relacl', 'c.relowner')} AS acl,
        pg_catalog.acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner) AS dflt,
        c.relnamespace AS nsp, c.relname::text AS rel, c.relowner AS owner
      FROM pg_catalog.pg_class c WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND c.relacl IS NOT NULL AND c.relnamespace IN (SELECT oid FROM nsp)
      UNION ALL SELECT 'pg_catalog.pg_class'::regclass, a.attrelid, a.attnum, a.attacl, '{}', c.relnamespace, c.relname::text, c.relowner
      FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
      WHERE a.attacl IS NOT NULL AND a.attnum > 0 AND NOT a.attisdropped AND c.relnamespace IN (SELECT oid FROM nsp)
      UNION ALL SELECT 'pg_catalog.pg_proc'::regclass, p.oid, 0, ${ownAcl('p.proacl', 'p.proowner')}, pg_catalog.acldefault('f', p.proowner), p.pronamespace, NULL, p.proowner
      FROM pg_catalog.pg_proc p WHERE p.proacl IS NOT NULL AND p.pronamespace IN (SELECT oid FROM nsp)
      UNION ALL SELECT 'pg_catalog.pg_type'::regclass, t.oid, 0, ${ownAcl('t.typacl', 't.typowner')}, pg_catalog.acldefault('T', t.typowner), t.typnamespace, NULL, t.typowner
      FROM pg_catalog.pg_type t WHERE t.typacl IS NOT NULL AND t.typnamespace IN (SELECT oid FROM nsp)
      UNION ALL SELECT 'pg_catalog.pg_namespace'::regclass, s.oid, 0, ${ownAcl('s.nspacl', 's.nspowner')}, pg_catalog.acldefault('n', s.nspowner), s.oid, NULL, s.nspowner
      FROM pg_catalog.pg_namespace s WHERE s.nspacl IS NOT NULL AND s.oid IN (SELECT oid FROM nsp)
      UNION ALL SELECT 'pg_catalog.pg_default_acl'::regclass, d.oid, 0, ${ownAcl('d.defaclacl', 'd.defaclrole')}, '{}', d.defaclnamespace, NULL, d.defaclrole
      FROM pg_catalog.pg_default_acl d)
    SELECT o.type, o.identity, x.rel,
      ARRAY(SELECT CASE WHEN e.grantee = 0 THEN 'PUBLIC' WHEN e.grantee = x.owner THEN '(owner)'
          ELSE quote_ident(pg_catalog.pg_get_userbyid(e.grantee)) END
          || ': ' || e.privilege_type || CASE WHEN e.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END
        FROM pg_catalog.aclexplode(x.acl) e) AS grants
    FROM acls x CROSS JOIN LATERAL pg_catalog.pg_identify_object(x.classid, x.objid, x.objsubid) o
    WHERE (x.nsp IN (SELECT oid FROM nsp) OR (x.nsp = 0 AND x.classid = 'pg_catalog.pg_default_acl'::regclass))
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e WHERE e.classid = x.classid AND e.objid = x.objid AND e.deptype = 'e')
      AND ARRAY(SELECT i::text FROM unnest(x.acl) i ORDER BY 1) IS DISTINCT FROM ARRAY(SELECT i::text FROM unnest(x.dflt) i ORDER BY 1)`,
  // Objects attached to a table (triggers, policies) have no schema of their own in
  // pg_identify_object; user objects are told from built-ins by OID.
  comments: `SELECT o.type, o.identity, d.description AS text,
      CASE WHEN d.classoid = 'pg_catalog.pg_class'::regclass THEN (SELECT relname::text FROM pg_catalog.pg_class WHERE oid = d.objoid) END AS rel
    FROM (SELECT * FROM pg_catalog.pg_description d
      -- Built-in objects (thousands of comments) predate FIRST_USER_OID; only schemas need a look.
      WHERE d.objoid >= ${FIRST_USER_OID} OR d.classoid = 'pg_catalog.pg_namespace'::regclass) d
    CROSS JOIN LATERAL pg_catalog.pg_identify_object(d.classoid, d.objoid, d.objsubid) o
    WHERE (o.schema IN (SELECT nspname FROM nsp)
        OR (d.classoid = 'pg_catalog.pg_namespace'::regclass AND d.objoid IN (SELECT oid FROM nsp))
        OR (o.schema IS NULL AND d.classoid <> 'pg_catalog.pg_namespace'::regclass AND d.objoid >= ${FIRST_USER_OID}))
      AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e WHERE e.classid = d.classoid AND e.objid = d.objoid AND e.deptype = 'e')
      -- An extension's own comment comes with it; listing it beside the extension says nothing new.
      AND NOT (d.classoid = 'pg_catalog.pg_extension'::regclass AND d.description IS NOT DISTINCT FROM
        (SELECT a.comment FROM pg_catalog.pg_available_extensions a WHERE a.name = o.identity))`,
};
