import { PgwError } from '@pgw/client';
import { apiClient, checkedAccountId } from '../api';
import { configFile, readConfig, writeConfig } from '../configStore';
import { resolveBaseUrl, type ConnectionFlags } from '../connection';
import { UsageError } from '../errors';
import { createOutput } from '../output';
import { promptHidden } from '../prompt';
import { printable } from '../printable';

/**
 * `pgw login`: checks the key with one call (GET /account) and saves it for that server in the user's
 * config dir (file 0600, dir 0700). The key is never printed, not even in part.
 */
export async function login(opts: ConnectionFlags & { json?: boolean }): Promise<void> {
  const baseUrl = resolveBaseUrl(opts);
  const out = createOutput(opts);
  let apiKey = opts.apiKey ?? (process.env.PGW_API_KEY?.trim() || undefined);
  if (!apiKey) {
    if (!process.stdin.isTTY) throw new UsageError('no key given: pass --api-key or set PGW_API_KEY (standard input is not a terminal to ask on)');
    apiKey = (await promptHidden(`Secret key for ${baseUrl} (sk_test_…): `)).trim();
    if (!apiKey) throw new UsageError('no key entered');
  }
  refusePublishableKey(apiKey);
  const api = apiClient({ baseUrl, apiKey });
  out.progress(`checking the key against ${baseUrl}`);
  let account: { id: string; name: string | null } | null = null;
  try {
    const { data } = await api.GET('/account');
    account = { id: checkedAccountId(data.id, baseUrl), name: data.name ?? null };
  } catch (err) {
    // A restricted key without account:read is still a valid key (authentication passed).
    if (!(err instanceof PgwError && err.code === 'permission_denied')) throw err;
  }
  const config = readConfig();
  config.logins = { ...config.logins, [baseUrl]: { api_key: apiKey, account_id: account?.id ?? null, saved_at: new Date().toISOString() } };
  config.default_base_url = baseUrl;
  writeConfig(config);
  const file = configFile();
  if (out.json) return out.object({ object: 'pgw.login', base_url: baseUrl, account: account?.id ?? null, config_file: file });
  const who = account ? `account ${printable(account.id)}${account.name ? ` (${printable(account.name)})` : ''}` : 'a restricted key (no account:read)';
  out.line(`Logged in to ${baseUrl} as ${who}; key saved in ${file}`);
}

/**
 * A publishable key (`pk_test_…`) may only list payment methods (contract decisions, "Keys and
 * permissions"): every command of pgw would be refused with it, so login refuses it first and says why.
 */
function refusePublishableKey(apiKey: string): void {
  if (!apiKey.startsWith('pk_')) return;
  throw new UsageError(
    'that is a publishable key (pk_test_…): it can only list payment methods, for browsers and apps. ' +
      'pgw needs a secret key (sk_test_…, the full one or a restricted one): the `sk` of POST /v1/sandbox/accounts, or the dashboard',
  );
}
