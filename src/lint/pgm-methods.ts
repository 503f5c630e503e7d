/**
 * Which `pgm.*` methods generate a statement of a given kind, as node-pg-migrate writes them
 * (its operation names, aliases included: `addIndex` is `createIndex`). A call's step can hold
 * several statements (a table and its comments, a trigger and its function): the first decides.
 */

const ALTER_TABLE = String.raw`^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?(?:"(?:[^"]|"")+"|[\w$]+)(?:\.(?:"(?:[^"]|"")+"|[\w$]+))?\s+`;
const ALTER = (object: string): string =>
  String.raw`^ALTER\s+${object}\s+(?:IF\s+EXISTS\s+)?(?:"(?:[^"]|"")+"|[\w$]+)(?:\.(?:"(?:[^"]|"")+"|[\w$]+))?\s*`;

/** First match wins: the specific forms of an ALTER come before its catch-all. */
const KINDS: [string, string][] = [
  [String.raw`^CREATE\s+(?:UNIQUE\s+)?INDEX\b`, 'createIndex addIndex'],
  [String.raw`^DROP\s+INDEX\b`, 'dropIndex'],
  [String.raw`^ALTER\s+INDEX\b`, 'renameIndex'],
  [String.raw`^CREATE\s+(?:(?:GLOBAL|LOCAL)\s+)?(?:TEMP(?:ORARY)?\s+|UNLOGGED\s+)?TABLE\b`, 'createTable'],
  [String.raw`^DROP\s+TABLE\b`, 'dropTable'],
  [`${ALTER_TABLE}RENAME\\s+TO\\b`, 'renameTable'],
  [`${ALTER_TABLE}RENAME\\s+CONSTRAINT\\b`, 'renameConstraint'],
  [`${ALTER_TABLE}RENAME\\b`, 'renameColumn'],
  [`${ALTER_TABLE}ADD\\s+CONSTRAINT\\b`, 'addConstraint createConstraint'],
  [`${ALTER_TABLE}DROP\\s+CONSTRAINT\\b`, 'dropConstraint'],
  [`${ALTER_TABLE}ADD\\b`, 'addColumns addColumn'],
  [`${ALTER_TABLE}DROP\\b`, 'dropColumns dropColumn'],
  [`${ALTER_TABLE}ALTER\\b`, 'alterColumn'],
  [String.raw`^ALTER\s+TABLE\b`, 'alterTable'],
  [String.raw`^CREATE\s+MATERIALIZED\s+VIEW\b`, 'createMaterializedView'],
  [String.raw`^DROP\s+MATERIALIZED\s+VIEW\b`, 'dropMaterializedView'],
  [`${ALTER('MATERIALIZED\\s+VIEW')}RENAME\\s+COLUMN\\b`, 'renameMaterializedViewColumn'],
  [`${ALTER('MATERIALIZED\\s+VIEW')}RENAME\\b`, 'renameMaterializedView'],
  [String.raw`^ALTER\s+MATERIALIZED\s+VIEW\b`, 'alterMaterializedView'],
  [String.raw`^REFRESH\s+MATERIALIZED\s+VIEW\b`, 'refreshMaterializedView'],
  [String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(?:RECURSIVE\s+)?VIEW\b`, 'createView'],
  [String.raw`^DROP\s+VIEW\b`, 'dropView'],
  [`${ALTER('VIEW')}RENAME\\b`, 'renameView'],
  [`${ALTER('VIEW')}ALTER\\b`, 'alterViewColumn'],
  [String.raw`^ALTER\s+VIEW\b`, 'alterView'],
  [String.raw`^CREATE\s+EXTENSION\b`, 'createExtension addExtension'],
  [String.raw`^DROP\s+EXTENSION\b`, 'dropExtension'],
  [String.raw`^CREATE\s+TYPE\b`, 'createType addType'],
  [String.raw`^DROP\s+TYPE\b`, 'dropType'],
  [`${ALTER('TYPE')}ADD\\s+VALUE\\b`, 'addTypeValue'],
  [`${ALTER('TYPE')}RENAME\\s+VALUE\\b`, 'renameTypeValue'],
  [`${ALTER('TYPE')}RENAME\\s+ATTRIBUTE\\b`, 'renameTypeAttribute'],
  [`${ALTER('TYPE')}RENAME\\b`, 'renameType'],
  [`${ALTER('TYPE')}ADD\\s+ATTRIBUTE\\b`, 'addTypeAttribute'],
  [`${ALTER('TYPE')}DROP\\s+ATTRIBUTE\\b`, 'dropTypeAttribute'],
  [`${ALTER('TYPE')}ALTER\\s+ATTRIBUTE\\b`, 'setTypeAttribute'],
  [String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\b`, 'createFunction createTrigger'],
  [String.raw`^DROP\s+FUNCTION\b`, 'dropFunction'],
  [String.raw`^ALTER\s+FUNCTION\b`, 'renameFunction'],
  [String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\b`, 'createTrigger'],
  [String.raw`^DROP\s+TRIGGER\b`, 'dropTrigger'],
  [String.raw`^ALTER\s+TRIGGER\b`, 'renameTrigger'],
  [String.raw`^CREATE\s+SCHEMA\b`, 'createSchema'],
  [String.raw`^DROP\s+SCHEMA\b`, 'dropSchema'],
  [String.raw`^ALTER\s+SCHEMA\b`, 'renameSchema'],
  [String.raw`^CREATE\s+DOMAIN\b`, 'createDomain'],
  [String.raw`^DROP\s+DOMAIN\b`, 'dropDomain'],
  [`${ALTER('DOMAIN')}RENAME\\s+TO\\b`, 'renameDomain'],
  [String.raw`^ALTER\s+DOMAIN\b`, 'alterDomain'],
  [String.raw`^CREATE\s+SEQUENCE\b`, 'createSequence'],
  [String.raw`^DROP\s+SEQUENCE\b`, 'dropSequence'],
  [`${ALTER('SEQUENCE')}RENAME\\s+TO\\b`, 'renameSequence'],
  [String.raw`^ALTER\s+SEQUENCE\b`, 'alterSequence'],
  [String.raw`^CREATE\s+ROLE\b`, 'createRole'],
  [String.raw`^DROP\s+ROLE\b`, 'dropRole'],
  [`${ALTER('ROLE')}RENAME\\s+TO\\b`, 'renameRole'],
  [String.raw`^ALTER\s+ROLE\b`, 'alterRole'],
  [String.raw`^CREATE\s+POLICY\b`, 'createPolicy'],
  [String.raw`^DROP\s+POLICY\b`, 'dropPolicy'],
  [String.raw`^ALTER\s+POLICY\b[\s\S]*\bRENAME\s+TO\b`, 'renamePolicy'],
  [String.raw`^ALTER\s+POLICY\b`, 'alterPolicy'],
  [String.raw`^CREATE\s+OPERATOR\s+CLASS\b`, 'createOperatorClass'],
  [String.raw`^DROP\s+OPERATOR\s+CLASS\b`, 'dropOperatorClass'],
  [String.raw`^ALTER\s+OPERATOR\s+CLASS\b`, 'renameOperatorClass'],
  [String.raw`^CREATE\s+OPERATOR\s+FAMILY\b`, 'createOperatorFamily'],
  [String.raw`^DROP\s+OPERATOR\s+FAMILY\b`, 'dropOperatorFamily'],
  [String.raw`^ALTER\s+OPERATOR\s+FAMILY\b[\s\S]*\bRENAME\s+TO\b`, 'renameOperatorFamily'],
  [String.raw`^ALTER\s+OPERATOR\s+FAMILY\b[\s\S]*\bADD\b`, 'addToOperatorFamily'],
  [String.raw`^ALTER\s+OPERATOR\s+FAMILY\b[\s\S]*\bDROP\b`, 'removeFromOperatorFamily'],
  [String.raw`^CREATE\s+OPERATOR\b`, 'createOperator'],
  [String.raw`^DROP\s+OPERATOR\b`, 'dropOperator'],
  [String.raw`^CREATE\s+CAST\b`, 'createCast'],
  [String.raw`^DROP\s+CAST\b`, 'dropCast'],
  [String.raw`^GRANT\b[^;]*\bON\s+SCHEMA\b`, 'grantOnSchemas'],
  [String.raw`^GRANT\b[^;]*\bON\b`, 'grantOnTables'],
  [String.raw`^GRANT\b`, 'grantRoles'],
  [String.raw`^REVOKE\b[^;]*\bON\s+SCHEMA\b`, 'revokeOnSchemas'],
  [String.raw`^REVOKE\b[^;]*\bON\b`, 'revokeOnTables'],
  [String.raw`^REVOKE\b`, 'revokeRoles'],
  // A comment alone: an option of the call that made or altered the object.
  [String.raw`^COMMENT\s+ON\s+COLUMN\b`, 'alterColumn addColumns addColumn createTable'],
  [String.raw`^COMMENT\s+ON\s+TABLE\b`, 'createTable alterTable'],
  [String.raw`^COMMENT\s+ON\s+CONSTRAINT\b`, 'addConstraint createConstraint'],
  [String.raw`^COMMENT\s+ON\s+(?:MATERIALIZED\s+)?VIEW\b`, 'createView createMaterializedView'],
  [String.raw`^COMMENT\s+ON\s+TYPE\b`, 'createType addType'],
  [String.raw`^COMMENT\s+ON\s+SCHEMA\b`, 'createSchema'],
  [String.raw`^COMMENT\s+ON\s+INDEX\b`, 'createIndex addIndex'],
];

const COMPILED: [RegExp, Set<string>][] = KINDS.map(([kind, methods]) => [
  new RegExp(kind, 'i'),
  new Set(methods.split(' ')),
]);

/** The methods that generate `statement`, or undefined for a statement no method writes. */
export function methodsFor(statement: string): ReadonlySet<string> | undefined {
  const text = statement.replace(/^(?:\s|--[^\n]*\n)+/, '');
  return COMPILED.find(([kind]) => kind.test(text))?.[1];
}
