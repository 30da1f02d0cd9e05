"""Provider catalogue: each function(rng) -> Spec with a freshly generated value in the provider's format."""
import json
from urllib.parse import quote
from common import *

PROVIDERS = []


def prov(fn):
    PROVIDERS.append((fn.__name__[2:], fn))
    return fn


def bearer(v, url, hdr='Authorization: Bearer {v}'):
    return f'curl -s -H "{hdr.format(v=v)}" {url}'


def netrc(machine, login, pw):
    return f'machine {machine}\n  login {login}\n  password {pw}\n'


# =============================== source forges ===============================
@prov
def p_github_classic_pat(rng):
    v = crc_token(rng, 'ghp_')
    u = user(rng)
    return Spec('github_classic_pat', v, 'GITHUB_TOKEN', curl=bearer(v, 'https://api.github.com/user/repos', 'Authorization: token {v}'),
                natives=[('.git-credentials', f'https://{u}:{v}@github.com\n', 'git-credentials'),
                         ('.config/gh/hosts.yml', f'github.com:\n    user: {u}\n    oauth_token: {v}\n    git_protocol: ssh\n', 'gh-hosts'),
                         ('.composer/auth.json', json.dumps({'github-oauth': {'github.com': v}}, indent=4) + '\n', 'composer-auth')])


@prov
def p_github_fine_grained(rng):
    v = 'github_pat_11' + rs(rng, 20, UPALNUM) + '_' + rs(rng, 59, ALNUM)
    return Spec('github_fine_grained_pat', v, 'GH_TOKEN', curl=bearer(v, 'https://api.github.com/repos/acme/infra/actions/runs'))


@prov
def p_github_oauth(rng):
    v = crc_token(rng, 'gho_')
    return Spec('github_oauth', v, 'GITHUB_OAUTH_TOKEN',
                natives=[('.config/gh/hosts.yml', f'github.com:\n    git_protocol: https\n    users:\n        {user(rng)}:\n            oauth_token: {v}\n    oauth_token: {v}\n', 'gh-hosts'),
                         ('.config/hub', f'github.com:\n- user: {user(rng)}\n  oauth_token: {v}\n  protocol: https\n', 'hub-config')])


@prov
def p_github_app_install(rng):
    v = crc_token(rng, 'ghs_')
    return Spec('github_app_installation', v, 'GITHUB_APP_TOKEN', curl=bearer(v, 'https://api.github.com/installation/repositories'))


@prov
def p_github_user_to_server(rng):
    v = crc_token(rng, 'ghu_')
    return Spec('github_user_to_server', v, 'GITHUB_USER_TOKEN')


@prov
def p_github_refresh(rng):
    v = 'ghr_' + rs(rng, 76, ALNUM)
    return Spec('github_refresh', v, 'GITHUB_REFRESH_TOKEN')


@prov
def p_github_app_private_key(rng):
    k = pem_trad(rsa_key(rng))
    app = proj(rng)
    return Spec('github_app_private_key', k, 'GITHUB_APP_PRIVATE_KEY', generic=False, needle='-----BEGIN RSA PRIVATE KEY-----',
                natives=[(f'Downloads/{app}.2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}.private-key.pem', k, 'pem-file')])


@prov
def p_gitlab_pat(rng):
    v = 'glpat-' + rs(rng, 20, ALNUM + '_-')
    return Spec('gitlab_pat', v, 'GITLAB_TOKEN', curl=bearer(v, 'https://gitlab.com/api/v4/projects?owned=true', 'PRIVATE-TOKEN: {v}'),
                natives=[('.python-gitlab.cfg', f'[global]\ndefault = gitlab\nssl_verify = true\ntimeout = 5\n\n[gitlab]\nurl = https://gitlab.com\nprivate_token = {v}\napi_version = 4\n', 'python-gitlab-cfg'),
                         ('.config/glab-cli/config.yml', f'git_protocol: ssh\neditor: vim\nhosts:\n    gitlab.com:\n        token: {v}\n        api_host: gitlab.com\n        git_protocol: ssh\n        user: {user(rng)}\n', 'glab-config')])


@prov
def p_gitlab_pipeline_trigger(rng):
    v = 'glptt-' + rs(rng, 40, HEX)
    return Spec('gitlab_pipeline_trigger', v, 'GITLAB_TRIGGER_TOKEN',
                curl=f'curl -X POST --fail -F token={v} -F ref=main https://gitlab.com/api/v4/projects/{rng.randint(10**6, 9*10**7)}/trigger/pipeline')


@prov
def p_gitlab_runner(rng):
    v = 'glrt-' + rs(rng, 20, ALNUM + '_-')
    return Spec('gitlab_runner_token', v, 'RUNNER_TOKEN',
                natives=[('.gitlab-runner/config.toml', f'concurrent = 2\ncheck_interval = 0\n\n[[runners]]\n  name = "{user(rng)}-laptop"\n  url = "https://gitlab.com"\n  id = {rng.randint(10**6, 10**8)}\n  token = "{v}"\n  executor = "docker"\n  [runners.docker]\n    image = "alpine:3.19"\n    privileged = false\n', 'gitlab-runner-config')])


@prov
def p_gitlab_deploy(rng):
    v = 'gldt-' + rs(rng, 20, ALNUM + '_-')
    return Spec('gitlab_deploy_token', v, 'DEPLOY_TOKEN', extras=[('DEPLOY_USER', f'gitlab+deploy-token-{rng.randint(1000, 99999)}')])


@prov
def p_gitlab_feed(rng):
    v = 'glft-' + rs(rng, 20, ALNUM + '_-')
    return Spec('gitlab_feed_token', v, 'GITLAB_FEED_TOKEN')


@prov
def p_gitlab_oauth_secret(rng):
    v = 'gloas-' + rs(rng, 64, HEX)
    return Spec('gitlab_oauth_app_secret', v, 'GITLAB_APP_SECRET', extras=[('GITLAB_APP_ID', rs(rng, 64, HEX))])


@prov
def p_bitbucket_app_password(rng):
    v = 'ATBB' + rs(rng, 32, ALNUM) + rs(rng, 8, HEXU)
    u = user(rng)
    return Spec('bitbucket_app_password', v, 'BITBUCKET_APP_PASSWORD', extras=[('BITBUCKET_USERNAME', u)],
                natives=[('.git-credentials', f'https://{u}:{v}@bitbucket.org\n', 'git-credentials')])


@prov
def p_atlassian(rng):
    v = 'ATATT3xFfGF0' + rs(rng, 170, B64U) + '=' + rs(rng, 8, HEXU)
    return Spec('atlassian_api_token', v, 'JIRA_API_TOKEN', extras=[('JIRA_USER', email(rng)), ('JIRA_URL', f'https://{org(rng)}.atlassian.net')])


@prov
def p_azure_devops_pat(rng):
    v = rs(rng, 52, LO + '234567')
    return Spec('azure_devops_pat', v, 'AZURE_DEVOPS_EXT_PAT',
                curl=f'curl -u :{v} https://dev.azure.com/{org(rng)}/_apis/projects?api-version=7.0')


# =============================== chat ===============================
@prov
def p_slack_bot(rng):
    v = f'xoxb-{rs(rng, rng.randint(10, 13), DIG)}-{rs(rng, 13, DIG)}-{rs(rng, 24, ALNUM)}'
    return Spec('slack_bot_token', v, 'SLACK_BOT_TOKEN', curl=bearer(v, 'https://slack.com/api/auth.test'))


@prov
def p_slack_user(rng):
    v = f'xoxp-{rs(rng, 11, DIG)}-{rs(rng, 12, DIG)}-{rs(rng, 13, DIG)}-{rs(rng, 32, HEX)}'
    return Spec('slack_user_token', v, 'SLACK_USER_TOKEN')


@prov
def p_slack_app(rng):
    v = f'xapp-1-A{rs(rng, 10, UPALNUM)}-{rs(rng, 13, DIG)}-{rs(rng, 64, HEX)}'
    return Spec('slack_app_token', v, 'SLACK_APP_TOKEN')


@prov
def p_slack_config(rng):
    v = 'xoxe.xoxp-1-Mi0yLTE' + rs(rng, 147, ALNUM)
    return Spec('slack_config_token', v, 'SLACK_CONFIG_TOKEN')


@prov
def p_slack_refresh(rng):
    v = 'xoxe-1-My0xLTE' + rs(rng, 133, ALNUM)
    return Spec('slack_config_refresh_token', v, 'SLACK_REFRESH_TOKEN')


@prov
def p_slack_webhook(rng):
    v = f'https://hooks.slack.com/services/T0{rs(rng, 8, UPALNUM)}/B0{rs(rng, 9, UPALNUM)}/{rs(rng, 24, ALNUM)}'
    return Spec('slack_webhook', v, 'SLACK_WEBHOOK_URL',
                curl=f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy finished\"}}' {v}")


@prov
def p_discord_bot(rng):
    uid = str(rng.randint(10 ** 17, 13 * 10 ** 17))
    v = b64(uid).rstrip('=') + '.' + rs(rng, 6, B64U) + '.' + rs(rng, 38, B64U)
    return Spec('discord_bot_token', v, 'DISCORD_TOKEN', curl=bearer(v, 'https://discord.com/api/v10/users/@me', 'Authorization: Bot {v}'))


@prov
def p_discord_webhook(rng):
    v = f'https://discord.com/api/webhooks/{rng.randint(10 ** 17, 13 * 10 ** 17)}/{rs(rng, 68, B64U)}'
    return Spec('discord_webhook', v, 'DISCORD_WEBHOOK',
                curl=f"curl -H 'Content-Type: application/json' -d '{{\"content\":\"backup ok\"}}' '{v}'")


@prov
def p_telegram(rng):
    v = f'{rng.randint(10 ** 8, 8 * 10 ** 9)}:AA{rs(rng, 33, B64U)}'
    return Spec('telegram_bot_token', v, 'TELEGRAM_BOT_TOKEN',
                curl=f'curl -s "https://api.telegram.org/bot{v}/sendMessage?chat_id={rng.randint(10**8, 10**9)}&text=done"')


@prov
def p_teams_webhook(rng):
    v = (f'https://{org(rng).replace("-", "")}.webhook.office.com/webhookb2/{ruuid(rng)}@{ruuid(rng)}'
         f'/IncomingWebhook/{rs(rng, 32, HEX)}/{ruuid(rng)}')
    return Spec('msteams_webhook', v, 'TEAMS_WEBHOOK_URL',
                curl=f"curl -H 'Content-Type: application/json' -d '{{\"text\": \"nightly build failed\"}}' {v}")


@prov
def p_matrix(rng):
    u = user(rng)
    body = rs(rng, 20, ALNUM)
    v = f'syt_{b64(u).rstrip("=")}_{body}_{b62(zlib.crc32(body.encode()) & 0xffffffff)}'
    return Spec('matrix_access_token', v, 'MATRIX_ACCESS_TOKEN', extras=[('MATRIX_HOMESERVER', 'https://matrix.org')])


@prov
def p_line(rng):
    v = rs(rng, 171, B64) + '='
    return Spec('line_channel_token', v, 'LINE_CHANNEL_ACCESS_TOKEN', extras=[('LINE_CHANNEL_SECRET', rs(rng, 32, HEX))])


@prov
def p_zoom(rng):
    v = rs(rng, 32, ALNUM)
    return Spec('zoom_s2s_secret', v, 'ZOOM_CLIENT_SECRET',
                extras=[('ZOOM_ACCOUNT_ID', rs(rng, 22, ALNUM + '_-')), ('ZOOM_CLIENT_ID', rs(rng, 22, ALNUM))])


@prov
def p_twitch(rng):
    v = rs(rng, 30, LOALNUM)
    return Spec('twitch_client_secret', v, 'TWITCH_CLIENT_SECRET', extras=[('TWITCH_CLIENT_ID', rs(rng, 30, LOALNUM))])


# =============================== payments / commerce ===============================
@prov
def p_stripe_secret(rng):
    v = 'sk_live_' + (rs(rng, 24) if rng.random() < .4 else '51' + rs(rng, 97))
    return Spec('stripe_secret_key', v, 'STRIPE_SECRET_KEY', curl=f'curl https://api.stripe.com/v1/charges -u {v}:')


@prov
def p_stripe_restricted(rng):
    v = 'rk_live_' + (rs(rng, 24) if rng.random() < .4 else '51' + rs(rng, 97))
    return Spec('stripe_restricted_key', v, 'STRIPE_API_KEY',
                natives=[('.config/stripe/config.toml', f'color = ""\n\n[default]\n  account_id = "acct_1{rs(rng, 15)}"\n  device_name = "{user(rng)}-mbp"\n  display_name = "{org(rng)}"\n  live_mode_api_key = "{v}"\n  live_mode_key_expires_at = "2025-09-01"\n  live_mode_pub_key = "pk_live_51{rs(rng, 97)}"\n', 'stripe-cli-config')])


@prov
def p_stripe_webhook(rng):
    v = 'whsec_' + rs(rng, 32)
    return Spec('stripe_webhook_secret', v, 'STRIPE_WEBHOOK_SECRET')


@prov
def p_shopify_access(rng):
    v = 'shpat_' + rs(rng, 32, HEX)
    return Spec('shopify_access_token', v, 'SHOPIFY_ACCESS_TOKEN', extras=[('SHOPIFY_STORE', f'{org(rng)}.myshopify.com')],
                curl=bearer(v, f'https://{org(rng)}.myshopify.com/admin/api/2024-01/orders.json', 'X-Shopify-Access-Token: {v}'))


@prov
def p_shopify_custom(rng):
    return Spec('shopify_custom_app', 'shpca_' + rs(rng, 32, HEX), 'SHOPIFY_CUSTOM_APP_TOKEN')


@prov
def p_shopify_private(rng):
    return Spec('shopify_private_app', 'shppa_' + rs(rng, 32, HEX), 'SHOPIFY_PASSWORD', extras=[('SHOPIFY_API_KEY', rs(rng, 32, HEX))])


@prov
def p_shopify_secret(rng):
    return Spec('shopify_shared_secret', 'shpss_' + rs(rng, 32, HEX), 'SHOPIFY_API_SECRET', extras=[('SHOPIFY_API_KEY', rs(rng, 32, HEX))])


@prov
def p_square_access(rng):
    v = 'EAAA' + rs(rng, 60, B64U)
    return Spec('square_access_token', v, 'SQUARE_ACCESS_TOKEN', curl=bearer(v, 'https://connect.squareup.com/v2/locations'))


@prov
def p_square_oauth_secret(rng):
    return Spec('square_oauth_secret', 'sq0csp-' + rs(rng, 43, B64U), 'SQUARE_APP_SECRET',
                extras=[('SQUARE_APP_ID', 'sq0idp-' + rs(rng, 22, B64U))])


@prov
def p_braintree(rng):
    v = f'access_token$production${rs(rng, 16, LOALNUM)}${rs(rng, 32, HEX)}'
    return Spec('braintree_access_token', v, 'BRAINTREE_ACCESS_TOKEN')


@prov
def p_paypal(rng):
    v = 'E' + rs(rng, 79, B64U)
    return Spec('paypal_client_secret', v, 'PAYPAL_CLIENT_SECRET', extras=[('PAYPAL_CLIENT_ID', 'A' + rs(rng, 79, B64U))],
                curl=f'curl -v https://api-m.paypal.com/v1/oauth2/token -u "A{rs(rng, 79, B64U)}:{v}" -d "grant_type=client_credentials"')


@prov
def p_plaid_access(rng):
    return Spec('plaid_access_token', 'access-production-' + ruuid(rng), 'PLAID_ACCESS_TOKEN')


@prov
def p_plaid_secret(rng):
    return Spec('plaid_secret', rs(rng, 30, HEX), 'PLAID_SECRET', extras=[('PLAID_CLIENT_ID', rs(rng, 24, HEX)), ('PLAID_ENV', 'production')])


@prov
def p_adyen(rng):
    v = 'AQE' + rs(rng, 93, B64) + '==-' + rs(rng, 43, B64) + '=-' + rs(rng, 16, ALNUM)
    return Spec('adyen_api_key', v, 'ADYEN_API_KEY', extras=[('ADYEN_MERCHANT_ACCOUNT', org(rng).title().replace('-', '') + 'ECOM')])


@prov
def p_flutterwave(rng):
    return Spec('flutterwave_secret', 'FLWSECK-' + rs(rng, 32, HEX) + '-X', 'FLW_SECRET_KEY',
                extras=[('FLW_PUBLIC_KEY', 'FLWPUBK-' + rs(rng, 32, HEX) + '-X')])


@prov
def p_paystack(rng):
    return Spec('paystack_secret', 'sk_live_' + rs(rng, 40, HEX), 'PAYSTACK_SECRET_KEY')


@prov
def p_razorpay(rng):
    return Spec('razorpay_secret', rs(rng, 24), 'RAZORPAY_KEY_SECRET', extras=[('RAZORPAY_KEY_ID', 'rzp_live_' + rs(rng, 14))])


@prov
def p_gocardless(rng):
    return Spec('gocardless_token', 'live_' + rs(rng, 40, B64U), 'GOCARDLESS_ACCESS_TOKEN')


@prov
def p_woocommerce(rng):
    return Spec('woocommerce_secret', 'cs_' + rs(rng, 40, HEX), 'WC_CONSUMER_SECRET', extras=[('WC_CONSUMER_KEY', 'ck_' + rs(rng, 40, HEX))])


@prov
def p_binance(rng):
    return Spec('binance_api_secret', rs(rng, 64), 'BINANCE_API_SECRET', extras=[('BINANCE_API_KEY', rs(rng, 64))])


@prov
def p_shippo(rng):
    return Spec('shippo_token', 'shippo_live_' + rs(rng, 40, HEX), 'SHIPPO_API_TOKEN')


@prov
def p_easypost(rng):
    return Spec('easypost_key', 'EZAK' + rs(rng, 54, ALNUM), 'EASYPOST_API_KEY')


@prov
def p_lob(rng):
    return Spec('lob_key', 'live_' + rs(rng, 35, HEX), 'LOB_API_KEY')


@prov
def p_duffel(rng):
    return Spec('duffel_token', 'duffel_live_' + rs(rng, 43, B64U), 'DUFFEL_ACCESS_TOKEN')


# =============================== email / messaging ===============================
@prov
def p_twilio_api_key(rng):
    sk = 'SK' + rs(rng, 32, HEX)
    v = rs(rng, 32)
    return Spec('twilio_api_key', v, 'TWILIO_API_SECRET', extras=[('TWILIO_ACCOUNT_SID', 'AC' + rs(rng, 32, HEX)), ('TWILIO_API_KEY', sk)])


@prov
def p_twilio_auth(rng):
    sid = 'AC' + rs(rng, 32, HEX)
    v = rs(rng, 32, HEX)
    return Spec('twilio_auth_token', v, 'TWILIO_AUTH_TOKEN', extras=[('TWILIO_ACCOUNT_SID', sid)],
                curl=f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json --data-urlencode 'To=+15558675310' --data-urlencode 'From=+15017122661' --data-urlencode 'Body=hi' -u {sid}:{v}")


@prov
def p_sendgrid(rng):
    v = 'SG.' + rs(rng, 22, B64U) + '.' + rs(rng, 43, B64U)
    return Spec('sendgrid', v, 'SENDGRID_API_KEY', curl=bearer(v, 'https://api.sendgrid.com/v3/scopes'))


@prov
def p_mailgun(rng):
    v = 'key-' + rs(rng, 32, HEX)
    return Spec('mailgun', v, 'MAILGUN_API_KEY', extras=[('MAILGUN_DOMAIN', f'mg.{org(rng)}.com')],
                curl=f"curl -s --user 'api:{v}' https://api.mailgun.net/v3/mg.example.org/messages -F from='ops@example.org' -F to=me@example.org -F subject=test -F text=hi")


@prov
def p_mailchimp(rng):
    v = rs(rng, 32, HEX) + f'-us{rng.randint(1, 21)}'
    return Spec('mailchimp', v, 'MAILCHIMP_API_KEY')


@prov
def p_brevo(rng):
    v = 'xkeysib-' + rs(rng, 64, HEX) + '-' + rs(rng, 16)
    return Spec('brevo_sendinblue', v, 'BREVO_API_KEY', curl=bearer(v, 'https://api.brevo.com/v3/account', 'api-key: {v}'))


@prov
def p_postmark(rng):
    v = ruuid(rng)
    return Spec('postmark_server_token', v, 'POSTMARK_SERVER_TOKEN',
                curl=bearer(v, 'https://api.postmarkapp.com/server', 'X-Postmark-Server-Token: {v}'))


@prov
def p_mandrill(rng):
    return Spec('mandrill', 'md-' + rs(rng, 22, B64U), 'MANDRILL_API_KEY')


@prov
def p_sparkpost(rng):
    return Spec('sparkpost', rs(rng, 40, HEX), 'SPARKPOST_API_KEY')


@prov
def p_resend(rng):
    v = 're_' + rs(rng, 8) + '_' + rs(rng, 24)
    return Spec('resend', v, 'RESEND_API_KEY', curl=bearer(v, 'https://api.resend.com/domains'))


@prov
def p_mailjet(rng):
    return Spec('mailjet', rs(rng, 32, HEX), 'MJ_APIKEY_PRIVATE', extras=[('MJ_APIKEY_PUBLIC', rs(rng, 32, HEX))])


@prov
def p_vonage(rng):
    return Spec('vonage_nexmo', rs(rng, 16), 'VONAGE_API_SECRET', extras=[('VONAGE_API_KEY', rs(rng, 8, HEX))])


@prov
def p_telnyx(rng):
    v = 'KEY' + rs(rng, 32, HEXU) + '_' + rs(rng, 22)
    return Spec('telnyx', v, 'TELNYX_API_KEY', curl=bearer(v, 'https://api.telnyx.com/v2/balance'))


@prov
def p_plivo(rng):
    return Spec('plivo', rs(rng, 40), 'PLIVO_AUTH_TOKEN', extras=[('PLIVO_AUTH_ID', 'MA' + rs(rng, 18, UPALNUM))])


@prov
def p_pushover(rng):
    return Spec('pushover', 'a' + rs(rng, 29, LOALNUM), 'PUSHOVER_APP_TOKEN', extras=[('PUSHOVER_USER_KEY', 'u' + rs(rng, 29, LOALNUM))])


@prov
def p_pusher(rng):
    return Spec('pusher_secret', rs(rng, 20, HEX), 'PUSHER_SECRET',
                extras=[('PUSHER_APP_ID', str(rng.randint(10 ** 6, 2 * 10 ** 6))), ('PUSHER_KEY', rs(rng, 20, HEX)), ('PUSHER_CLUSTER', 'eu')])


@prov
def p_ably(rng):
    return Spec('ably_key', f'{rs(rng, 6, B64U)}.{rs(rng, 6, B64U)}:{rs(rng, 43, B64U)}', 'ABLY_API_KEY')


@prov
def p_intercom(rng):
    v = b64('tok:' + ruuid(rng).replace('-', '_') + ':1:0')
    return Spec('intercom', v, 'INTERCOM_ACCESS_TOKEN', curl=bearer(v, 'https://api.intercom.io/me'))


@prov
def p_zendesk(rng):
    v = rs(rng, 40)
    e = email(rng)
    return Spec('zendesk', v, 'ZENDESK_API_TOKEN', extras=[('ZENDESK_EMAIL', e), ('ZENDESK_SUBDOMAIN', org(rng))],
                curl=f'curl https://{org(rng)}.zendesk.com/api/v2/tickets.json -u {e}/token:{v}')


@prov
def p_hubspot(rng):
    v = f'pat-{rng.choice(["na1", "eu1", "na2"])}-{ruuid(rng)}'
    return Spec('hubspot_pat', v, 'HUBSPOT_ACCESS_TOKEN', curl=bearer(v, 'https://api.hubapi.com/crm/v3/objects/contacts?limit=10'))


@prov
def p_klaviyo(rng):
    return Spec('klaviyo_private_key', 'pk_' + rs(rng, 34, HEX), 'KLAVIYO_PRIVATE_API_KEY')


# =============================== productivity / SaaS ===============================
@prov
def p_asana(rng):
    v = f'2/{rs(rng, 16, DIG)}/{rs(rng, 16, DIG)}:{rs(rng, 32, HEX)}'
    return Spec('asana_pat', v, 'ASANA_ACCESS_TOKEN', curl=bearer(v, 'https://app.asana.com/api/1.0/users/me'))


@prov
def p_linear(rng):
    v = 'lin_api_' + rs(rng, 40)
    return Spec('linear_api_key', v, 'LINEAR_API_KEY')


@prov
def p_notion(rng):
    return Spec('notion_token', 'ntn_' + rs(rng, 11, DIG) + rs(rng, 35), 'NOTION_TOKEN')


@prov
def p_notion_legacy(rng):
    return Spec('notion_secret_legacy', 'secret_' + rs(rng, 43), 'NOTION_API_KEY')


@prov
def p_airtable(rng):
    v = 'pat' + rs(rng, 14) + '.' + rs(rng, 64, HEX)
    return Spec('airtable_pat', v, 'AIRTABLE_TOKEN', curl=bearer(v, 'https://api.airtable.com/v0/meta/bases'))


@prov
def p_figma(rng):
    return Spec('figma_pat', 'figd_' + rs(rng, 40, B64U), 'FIGMA_TOKEN')


@prov
def p_dropbox(rng):
    v = 'sl.' + rng.choice('AB') + rs(rng, 134, B64U)
    rclone = (f'[dropbox]\ntype = dropbox\ntoken = {{"access_token":"{v}","token_type":"bearer",'
              f'"refresh_token":"{rs(rng, 43, B64U)}","expiry":"2025-03-0{rng.randint(1, 9)}T10:11:12.1234+01:00"}}\n')
    return Spec('dropbox_token', v, 'DROPBOX_ACCESS_TOKEN', natives=[('.config/rclone/rclone.conf', rclone, 'rclone-conf')],
                curl=bearer(v, 'https://api.dropboxapi.com/2/users/get_current_account -X POST'))


@prov
def p_box(rng):
    return Spec('box_client_secret', rs(rng, 32), 'BOX_CLIENT_SECRET', extras=[('BOX_CLIENT_ID', rs(rng, 32, LOALNUM))])


@prov
def p_trello(rng):
    return Spec('trello_token', 'ATTA' + rs(rng, 64, HEX) + rs(rng, 8, HEXU), 'TRELLO_TOKEN', extras=[('TRELLO_KEY', rs(rng, 32, HEX))])


@prov
def p_contentful(rng):
    return Spec('contentful_pat', 'CFPAT-' + rs(rng, 43, B64U), 'CONTENTFUL_MANAGEMENT_TOKEN', extras=[('CONTENTFUL_SPACE_ID', rs(rng, 12, LOALNUM))])


@prov
def p_sanity(rng):
    return Spec('sanity_token', 'sk' + rs(rng, 180), 'SANITY_API_TOKEN', extras=[('SANITY_PROJECT_ID', rs(rng, 8, LOALNUM))])


@prov
def p_postman(rng):
    v = f'PMAK-{rs(rng, 24, HEX)}-{rs(rng, 34, HEX)}'
    return Spec('postman_api_key', v, 'POSTMAN_API_KEY', curl=bearer(v, 'https://api.getpostman.com/collections', 'X-Api-Key: {v}'))


@prov
def p_rapidapi(rng):
    v = rs(rng, 10, LOALNUM) + 'msh' + rs(rng, 14, LOALNUM) + 'p1' + rs(rng, 6, LOALNUM) + 'jsn' + rs(rng, 12, LOALNUM)
    return Spec('rapidapi_key', v, 'RAPIDAPI_KEY', curl=bearer(v, 'https://weatherapi-com.p.rapidapi.com/current.json?q=Berlin', 'X-RapidAPI-Key: {v}'))


@prov
def p_typeform(rng):
    return Spec('typeform_pat', 'tfp_' + rs(rng, 44, B64U) + '_' + rs(rng, 14, B64U), 'TYPEFORM_TOKEN')


@prov
def p_readme(rng):
    return Spec('readme_api_key', 'rdme_' + rs(rng, 70, LOALNUM), 'README_API_KEY')


@prov
def p_webflow(rng):
    return Spec('webflow_token', rs(rng, 64, HEX), 'WEBFLOW_API_TOKEN')


@prov
def p_frameio(rng):
    return Spec('frameio_token', 'fio-u-' + rs(rng, 64, B64U), 'FRAMEIO_TOKEN')


@prov
def p_bitly(rng):
    return Spec('bitly_token', rs(rng, 40, HEX), 'BITLY_ACCESS_TOKEN')


@prov
def p_salesforce(rng):
    v = '00D' + rs(rng, 12) + '!AQ' + rs(rng, 4) + 'AQ' + rs(rng, 88, ALNUM + '._')
    return Spec('salesforce_access_token', v, 'SF_ACCESS_TOKEN', extras=[('SF_INSTANCE_URL', f'https://{org(rng)}.my.salesforce.com')],
                curl=bearer(v, f'https://{org(rng)}.my.salesforce.com/services/data/v59.0/sobjects/Account'))


# =============================== cloud & hosting ===============================
@prov
def p_aws_access_key(rng):
    kid = 'AKIA' + rs(rng, 16, B32)
    v = rs(rng, 40, B64)
    prof = rng.choice(['default', 'prod', 'personal'])
    return Spec('aws_access_key', v, 'AWS_SECRET_ACCESS_KEY', extras=[('AWS_ACCESS_KEY_ID', kid), ('AWS_DEFAULT_REGION', 'eu-west-1')],
                natives=[('.aws/credentials', f'[{prof}]\naws_access_key_id = {kid}\naws_secret_access_key = {v}\n', 'aws-credentials'),
                         ('.s3cfg', f'[default]\naccess_key = {kid}\nsecret_key = {v}\nhost_base = s3.amazonaws.com\nhost_bucket = %(bucket)s.s3.amazonaws.com\nuse_https = True\n', 's3cfg'),
                         ('.boto', f'[Credentials]\naws_access_key_id = {kid}\naws_secret_access_key = {v}\n\n[Boto]\nhttps_validate_certificates = True\n', 'boto')])


@prov
def p_aws_session(rng):
    kid = 'ASIA' + rs(rng, 16, B32)
    sec = rs(rng, 40, B64)
    v = 'IQoJb3JpZ2luX2VjE' + rs(rng, 500, B64) + '=='
    return Spec('aws_session_token', v, 'AWS_SESSION_TOKEN', extras=[('AWS_ACCESS_KEY_ID', kid), ('AWS_SECRET_ACCESS_KEY', sec)],
                natives=[('.aws/credentials', f'[sso-admin]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}\naws_session_token = {v}\n', 'aws-credentials')])


@prov
def p_gcp_api_key(rng):
    v = 'AIza' + rs(rng, 35, B64U)
    return Spec('gcp_api_key', v, 'GOOGLE_API_KEY', curl=f'curl "https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={v}"')


@prov
def p_gcp_service_account(rng):
    k = pem_pkcs8(rsa_key(rng))
    project = f'{proj(rng)}-{rng.randint(100000, 999999)}'
    sa = f'{rng.choice(["deployer", "ci-bot", "terraform", "bq-reader"])}@{project}.iam.gserviceaccount.com'
    doc = {'type': 'service_account', 'project_id': project, 'private_key_id': rs(rng, 40, HEX), 'private_key': k,
           'client_email': sa, 'client_id': rs(rng, 21, DIG), 'auth_uri': 'https://accounts.google.com/o/oauth2/auth',
           'token_uri': 'https://oauth2.googleapis.com/token', 'auth_provider_x509_cert_url': 'https://www.googleapis.com/oauth2/v1/certs',
           'client_x509_cert_url': f'https://www.googleapis.com/robot/v1/metadata/x509/{quote(sa)}', 'universe_domain': 'googleapis.com'}
    txt = json.dumps(doc, indent=2) + '\n'
    return Spec('gcp_service_account', k, 'GOOGLE_APPLICATION_CREDENTIALS', generic=False, needle='"private_key": "-----BEGIN',
                natives=[(f'code/{proj(rng)}/{project}-{rs(rng, 12, HEX)}.json', txt, 'gcp-sa-json'),
                         (f'.config/gcloud/legacy_credentials/{sa}/adc.json', txt, 'gcp-sa-json')])


@prov
def p_google_oauth_secret(rng):
    v = 'GOCSPX-' + rs(rng, 28, B64U)
    cid = f'{rs(rng, 12, DIG)}-{rs(rng, 32, LOALNUM)}.apps.googleusercontent.com'
    js = json.dumps({'installed': {'client_id': cid, 'project_id': f'{proj(rng)}-{rng.randint(1000, 9999)}',
                                   'auth_uri': 'https://accounts.google.com/o/oauth2/auth', 'token_uri': 'https://oauth2.googleapis.com/token',
                                   'auth_provider_x509_cert_url': 'https://www.googleapis.com/oauth2/v1/certs', 'client_secret': v,
                                   'redirect_uris': ['http://localhost']}}) + '\n'
    return Spec('google_oauth_client_secret', v, 'GOOGLE_CLIENT_SECRET', extras=[('GOOGLE_CLIENT_ID', cid)],
                natives=[(f'Downloads/client_secret_{cid}.json', js, 'google-client-secret-json')])


@prov
def p_google_refresh(rng):
    v = '1//0' + rng.choice('3469bcdeg') + rs(rng, 98, ALNUM + '-_')
    adc = json.dumps({'account': '', 'client_id': '764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com',
                      'client_secret': 'd-FL95Q19q7MQmFpd7hHD0Ty', 'quota_project_id': f'{proj(rng)}-prod', 'refresh_token': v,
                      'type': 'authorized_user', 'universe_domain': 'googleapis.com'}, indent=2) + '\n'
    return Spec('google_oauth_refresh_token', v, 'GOOGLE_REFRESH_TOKEN', generic=False,
                natives=[('.config/gcloud/application_default_credentials.json', adc, 'gcloud-adc'),
                         ('.config/configstore/firebase-tools.json', json.dumps({'user': {'email': email(rng)}, 'tokens': {'refresh_token': v, 'scope': 'email openid https://www.googleapis.com/auth/cloud-platform'}}, indent=2) + '\n', 'firebase-tools')])


@prov
def p_google_access(rng):
    v = 'ya29.a0A' + rs(rng, 160, B64U)
    return Spec('google_oauth_access_token', v, 'GOOGLE_ACCESS_TOKEN', curl=bearer(v, 'https://www.googleapis.com/drive/v3/files'))


@prov
def p_firebase_fcm(rng):
    v = 'AAAA' + rs(rng, 7, B64U) + ':APA91b' + rs(rng, 134, B64U)
    return Spec('firebase_fcm_server_key', v, 'FCM_SERVER_KEY',
                curl=f'curl -X POST -H "Authorization: key={v}" -H "Content-Type: application/json" -d @msg.json https://fcm.googleapis.com/fcm/send')


@prov
def p_firebase_env_pem(rng):
    k = pem_pkcs8(rsa_key(rng))
    esc = k.replace('\n', '\\n')
    p = f'{proj(rng)}-{rng.randint(1000, 9999)}'
    txt = (f'NEXT_PUBLIC_FIREBASE_PROJECT_ID={p}\nFIREBASE_CLIENT_EMAIL=firebase-adminsdk-{rs(rng, 5, LOALNUM)}@{p}.iam.gserviceaccount.com\n'
           f'FIREBASE_PRIVATE_KEY="{esc}"\n')
    return Spec('firebase_admin_private_key_env', k, 'FIREBASE_PRIVATE_KEY', generic=False, needle='FIREBASE_PRIVATE_KEY=',
                natives=[(f'code/{proj(rng)}/.env.local', txt, 'dotenv-escaped-pem')])


@prov
def p_azure_storage(rng):
    acct = org(rng).replace('-', '') + rs(rng, 4, LOALNUM)
    v = f'DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={b64(rbytes(rng, 64))};EndpointSuffix=core.windows.net'
    return Spec('azure_storage_connection_string', v, 'AZURE_STORAGE_CONNECTION_STRING')


@prov
def p_azure_storage_key(rng):
    return Spec('azure_storage_account_key', b64(rbytes(rng, 64)), 'AZURE_STORAGE_KEY',
                extras=[('AZURE_STORAGE_ACCOUNT', org(rng).replace('-', '') + 'store')])


@prov
def p_azure_client_secret(rng):
    v = rs(rng, 3, ALNUM + '_~.-') + '8Q~' + rs(rng, 34, ALNUM + '_~.-')
    return Spec('azure_ad_client_secret', v, 'AZURE_CLIENT_SECRET', extras=[('AZURE_TENANT_ID', ruuid(rng)), ('AZURE_CLIENT_ID', ruuid(rng))])


@prov
def p_azure_sas(rng):
    sig = quote(b64(rbytes(rng, 32)), safe='')
    v = (f'https://{org(rng).replace("-", "")}data.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=sco&sp=rwdlacupiytfx'
         f'&se=2026-0{rng.randint(1, 9)}-01T00:00:00Z&st=2024-0{rng.randint(1, 9)}-01T00:00:00Z&spr=https&sig={sig}')
    return Spec('azure_sas_url', v, 'AZURE_BLOB_SAS_URL', curl=f'azcopy copy ./dump.sql.gz "{v}"')


@prov
def p_azure_function_key(rng):
    v = f'https://{proj(rng)}-func.azurewebsites.net/api/ingest?code={rs(rng, 54, B64U)}=='
    return Spec('azure_function_key_url', v, 'INGEST_FUNCTION_URL', curl=f'curl -X POST -d @event.json "{v}"')


@prov
def p_azure_openai(rng):
    return Spec('azure_openai_key', rs(rng, 32, HEX), 'AZURE_OPENAI_API_KEY',
                extras=[('AZURE_OPENAI_ENDPOINT', f'https://{org(rng)}-oai.openai.azure.com/')])


@prov
def p_alibaba(rng):
    return Spec('alibaba_access_key', rs(rng, 30), 'ALIBABA_CLOUD_ACCESS_KEY_SECRET',
                extras=[('ALIBABA_CLOUD_ACCESS_KEY_ID', 'LTAI' + rs(rng, 20))])


@prov
def p_tencent(rng):
    return Spec('tencent_secret', rs(rng, 32), 'TENCENTCLOUD_SECRET_KEY', extras=[('TENCENTCLOUD_SECRET_ID', 'AKID' + rs(rng, 32))])


@prov
def p_ibm(rng):
    v = rs(rng, 44, B64U)
    return Spec('ibm_cloud_api_key', v, 'IBMCLOUD_API_KEY',
                natives=[('Downloads/apikey.json', json.dumps({'name': f'{user(rng)}-cli', 'description': '', 'createdAt': '2024-05-02T10:20+0000', 'apikey': v}, indent=2) + '\n', 'ibm-apikey-json')])


@prov
def p_oracle_oci(rng):
    k = pem_pkcs8(rsa_key(rng))
    return Spec('oracle_oci_api_key', k, 'OCI_KEY', generic=False, needle='-----BEGIN PRIVATE KEY-----',
                natives=[('.oci/oci_api_key.pem', k + 'OCI_API_KEY\n', 'pem-file')])


@prov
def p_digitalocean_pat(rng):
    v = 'dop_v1_' + rs(rng, 64, HEX)
    return Spec('digitalocean_pat', v, 'DIGITALOCEAN_TOKEN',
                natives=[('.config/doctl/config.yaml', f'access-token: {v}\ncontext: default\noutput: text\n', 'doctl-config')])


@prov
def p_digitalocean_oauth(rng):
    return Spec('digitalocean_oauth', 'doo_v1_' + rs(rng, 64, HEX), 'DO_OAUTH_TOKEN')


@prov
def p_digitalocean_refresh(rng):
    return Spec('digitalocean_refresh', 'dor_v1_' + rs(rng, 64, HEX), 'DO_REFRESH_TOKEN')


@prov
def p_linode(rng):
    v = rs(rng, 64, HEX)
    return Spec('linode_token', v, 'LINODE_TOKEN',
                natives=[('.config/linode-cli', f'[DEFAULT]\ndefault-user = {user(rng)}\n\n[{user(rng)}]\ntoken = {v}\nregion = eu-central\ntype = g6-standard-2\nimage = linode/debian12\n', 'linode-cli')])


@prov
def p_vultr(rng):
    return Spec('vultr_api_key', rs(rng, 36, UPALNUM), 'VULTR_API_KEY')


@prov
def p_hetzner(rng):
    v = rs(rng, 64)
    return Spec('hetzner_cloud_token', v, 'HCLOUD_TOKEN',
                natives=[('.config/hcloud/cli.toml', f'active_context = "{proj(rng)}"\n\n[[contexts]]\n  name = "{proj(rng)}"\n  token = "{v}"\n', 'hcloud-cli')])


@prov
def p_scaleway(rng):
    ak = 'SCW' + rs(rng, 17, UPALNUM)
    v = ruuid(rng)
    return Spec('scaleway_secret_key', v, 'SCW_SECRET_KEY', extras=[('SCW_ACCESS_KEY', ak)],
                natives=[('.config/scw/config.yaml', f'access_key: {ak}\nsecret_key: {v}\ndefault_organization_id: {ruuid(rng)}\ndefault_project_id: {ruuid(rng)}\ndefault_region: fr-par\ndefault_zone: fr-par-1\n', 'scw-config')])


@prov
def p_heroku(rng):
    return Spec('heroku_api_key', 'HRKU-AA' + rs(rng, 58, B64U), 'HEROKU_API_KEY')


@prov
def p_heroku_legacy(rng):
    v = ruuid(rng)
    e = email(rng)
    return Spec('heroku_legacy_netrc', v, 'HEROKU_API_KEY', generic=False,
                natives=[('.netrc', netrc('api.heroku.com', e, v) + netrc('git.heroku.com', e, v), 'netrc')])


@prov
def p_netlify(rng):
    v = 'nfp_' + rs(rng, 36)
    uid = rs(rng, 24, HEX)
    return Spec('netlify_token', v, 'NETLIFY_AUTH_TOKEN',
                natives=[('.config/netlify/config.json', json.dumps({'telemetryDisabled': False, 'cliId': ruuid(rng), 'userId': uid,
                                                                     'users': {uid: {'id': uid, 'name': user(rng), 'email': email(rng), 'auth': {'token': v, 'github': {}}}}}, indent=2) + '\n', 'netlify-config')])


@prov
def p_vercel(rng):
    v = rs(rng, 24)
    return Spec('vercel_token', v, 'VERCEL_TOKEN',
                natives=[('.local/share/com.vercel.cli/auth.json', json.dumps({'// Note': 'This is your Vercel credentials file. DO NOT SHARE!', '// Docs': 'https://vercel.com/docs/projects/project-configuration/global-configuration#auth.json', 'token': v}, indent=2) + '\n', 'vercel-auth')])


@prov
def p_flyio(rng):
    v = 'FlyV1 fm2_' + b64(b'\x94\x93\xc4' + rbytes(rng, 217)) + ',fm2_' + b64(b'\x94\x93\xc4' + rbytes(rng, 117))
    return Spec('flyio_token', v, 'FLY_API_TOKEN',
                natives=[('.fly/config.yml', f'access_token: {v}\nlast_login: 2024-11-0{rng.randint(1, 9)}T12:00:00Z\nsend_metrics: true\nauto_update: true\n', 'fly-config')])


@prov
def p_render(rng):
    return Spec('render_api_key', 'rnd_' + rs(rng, 32), 'RENDER_API_KEY')


@prov
def p_railway(rng):
    return Spec('railway_token', ruuid(rng), 'RAILWAY_TOKEN')


@prov
def p_cloudflare_token(rng):
    v = rs(rng, 40, B64U)
    return Spec('cloudflare_api_token', v, 'CLOUDFLARE_API_TOKEN', curl=bearer(v, 'https://api.cloudflare.com/client/v4/user/tokens/verify'))


@prov
def p_cloudflare_global(rng):
    v = rs(rng, 37, HEX)
    e = email(rng)
    return Spec('cloudflare_global_key', v, 'CF_API_KEY', extras=[('CF_API_EMAIL', e)],
                curl=f'curl -X GET "https://api.cloudflare.com/client/v4/zones" -H "X-Auth-Email: {e}" -H "X-Auth-Key: {v}"')


@prov
def p_cloudflare_origin_ca(rng):
    return Spec('cloudflare_origin_ca_key', 'v1.0-' + rs(rng, 24, HEX) + '-' + rs(rng, 146, HEX), 'CF_ORIGIN_CA_KEY')


@prov
def p_fastly(rng):
    v = rs(rng, 32, B64U)
    return Spec('fastly_token', v, 'FASTLY_API_TOKEN', curl=bearer(v, 'https://api.fastly.com/current_user', 'Fastly-Key: {v}'))


@prov
def p_akamai(rng):
    host = f'akab-{rs(rng, 16, LOALNUM)}-{rs(rng, 16, LOALNUM)}.luna.akamaiapis.net'
    v = b64(rbytes(rng, 32))
    txt = (f'[default]\nclient_secret = {v}\nhost = {host}\naccess_token = akab-{rs(rng, 16, LOALNUM)}-{rs(rng, 16, LOALNUM)}\n'
           f'client_token = akab-{rs(rng, 16, LOALNUM)}-{rs(rng, 16, LOALNUM)}\n')
    return Spec('akamai_edgegrid', v, 'AKAMAI_CLIENT_SECRET', generic=False, natives=[('.edgerc', txt, 'edgerc')])


@prov
def p_backblaze(rng):
    kid = '00' + rs(rng, 10, HEX) + '00000000' + rs(rng, 5, HEX)
    v = 'K00' + rng.choice('0123') + rs(rng, 27)
    return Spec('backblaze_b2', v, 'B2_APPLICATION_KEY', extras=[('B2_APPLICATION_KEY_ID', kid)],
                natives=[('.config/rclone/rclone.conf', f'[b2]\ntype = b2\naccount = {kid}\nkey = {v}\nhard_delete = false\n', 'rclone-conf')])


@prov
def p_upstash(rng):
    v = f'rediss://default:{rs(rng, 32, HEX)}@{rng.choice(["eu1", "us1", "apn1"])}-{rng.choice(["brave", "calm", "proud"])}-{rng.choice(["otter", "falcon", "lynx"])}-{rng.randint(10000, 99999)}.upstash.io:6379'
    return Spec('upstash_redis_url', v, 'REDIS_URL')


@prov
def p_aiven(rng):
    return Spec('aiven_token', rs(rng, 372, B64), 'AIVEN_TOKEN')


@prov
def p_confluent(rng):
    return Spec('confluent_cloud_secret', rs(rng, 64, ALNUM + '+/'), 'CONFLUENT_CLOUD_API_SECRET',
                extras=[('CONFLUENT_CLOUD_API_KEY', rs(rng, 16, UPALNUM))])


@prov
def p_yandex(rng):
    return Spec('yandex_cloud_api_key', 'AQVN' + rs(rng, 36, B64U), 'YC_API_KEY')


@prov
def p_hcp(rng):
    return Spec('hcp_client_secret', rs(rng, 64), 'HCP_CLIENT_SECRET', extras=[('HCP_CLIENT_ID', rs(rng, 32))])


@prov
def p_tailscale(rng):
    v = 'tskey-auth-k' + rs(rng, 10) + 'CNTRL-' + rs(rng, 33)
    return Spec('tailscale_auth_key', v, 'TS_AUTHKEY', curl=f'sudo tailscale up --authkey={v} --ssh')


@prov
def p_ngrok(rng):
    v = '2' + rs(rng, 26) + '_' + rs(rng, 21)
    return Spec('ngrok_authtoken', v, 'NGROK_AUTHTOKEN', curl=f'ngrok config add-authtoken {v}',
                natives=[('.config/ngrok/ngrok.yml', f'version: "2"\nauthtoken: {v}\n', 'ngrok-config')])


# =============================== observability ===============================
@prov
def p_datadog_api(rng):
    v = rs(rng, 32, HEX)
    return Spec('datadog_api_key', v, 'DD_API_KEY', extras=[('DD_SITE', 'datadoghq.eu')],
                curl=f'curl -X GET "https://api.datadoghq.com/api/v1/validate" -H "DD-API-KEY: {v}"')


@prov
def p_datadog_app(rng):
    return Spec('datadog_app_key', rs(rng, 40, HEX), 'DD_APP_KEY')


@prov
def p_newrelic_user(rng):
    v = 'NRAK-' + rs(rng, 27, UPALNUM)
    return Spec('newrelic_user_key', v, 'NEW_RELIC_API_KEY', extras=[('NEW_RELIC_ACCOUNT_ID', str(rng.randint(10 ** 6, 4 * 10 ** 6)))])


@prov
def p_newrelic_license(rng):
    v = rs(rng, 36, HEX) + 'NRAL'
    return Spec('newrelic_license_key', v, 'NEW_RELIC_LICENSE_KEY',
                natives=[(f'code/{proj(rng)}/newrelic.yml', f"common: &default_settings\n  license_key: '{v}'\n  app_name: {proj(rng)}\n  log_level: info\n\nproduction:\n  <<: *default_settings\n", 'newrelic-yml')])


@prov
def p_newrelic_insert(rng):
    return Spec('newrelic_insert_key', 'NRII-' + rs(rng, 32, B64U), 'NEW_RELIC_INSERT_KEY')


@prov
def p_sentry_dsn_legacy(rng):
    v = f'https://{rs(rng, 32, HEX)}:{rs(rng, 32, HEX)}@o{rng.randint(10 ** 5, 10 ** 6)}.ingest.sentry.io/{rng.randint(10 ** 6, 10 ** 7)}'
    return Spec('sentry_dsn_with_secret', v, 'SENTRY_DSN')


@prov
def p_sentry_org_token(rng):
    payload = {'iat': ts(rng) + .123456, 'url': 'https://sentry.io', 'region_url': 'https://us.sentry.io', 'org': org(rng)}
    v = 'sntrys_' + b64(json.dumps(payload, separators=(',', ':'))).rstrip('=') + '_' + rs(rng, 43, B64)
    return Spec('sentry_org_auth_token', v, 'SENTRY_AUTH_TOKEN',
                natives=[('.sentryclirc', f'[defaults]\norg = {org(rng)}\nproject = {proj(rng)}\n\n[auth]\ntoken = {v}\n', 'sentryclirc')])


@prov
def p_sentry_user_token(rng):
    return Spec('sentry_user_auth_token', 'sntryu_' + rs(rng, 64, HEX), 'SENTRY_AUTH_TOKEN')


@prov
def p_honeycomb(rng):
    return Spec('honeycomb_ingest_key', 'hcaik_01' + rs(rng, 56, LOALNUM), 'HONEYCOMB_API_KEY')


@prov
def p_honeycomb_config(rng):
    v = rs(rng, 22, ALNUM)
    return Spec('honeycomb_config_key', v, 'HONEYCOMB_WRITEKEY',
                curl=f'curl https://api.honeycomb.io/1/events/prod-logs -X POST -H "X-Honeycomb-Team: {v}" -d \'{{"status":"ok"}}\'')


@prov
def p_grafana_cloud(rng):
    payload = {'o': str(rng.randint(10 ** 5, 10 ** 6)), 'n': f'stack-{rng.randint(10 ** 5, 10 ** 6)}-hm-write-{proj(rng)}',
               'k': rs(rng, 24), 'm': {'r': rng.choice(['prod-us-east-0', 'prod-eu-west-2'])}}
    return Spec('grafana_cloud_token', 'glc_' + b64(json.dumps(payload, separators=(',', ':'))), 'GRAFANA_CLOUD_TOKEN')


@prov
def p_grafana_sa(rng):
    body = rs(rng, 32)
    v = f'glsa_{body}_{zlib.crc32(("glsa_" + body).encode()) & 0xffffffff:08x}'
    return Spec('grafana_service_account', v, 'GRAFANA_TOKEN', extras=[('GRAFANA_URL', f'https://{org(rng)}.grafana.net')],
                curl=bearer(v, f'https://{org(rng)}.grafana.net/api/dashboards/home'))


@prov
def p_dynatrace(rng):
    v = 'dt0c01.' + rs(rng, 24, UPALNUM) + '.' + rs(rng, 64, UPALNUM)
    return Spec('dynatrace_token', v, 'DT_API_TOKEN', curl=bearer(v, 'https://abc12345.live.dynatrace.com/api/v2/metrics', 'Authorization: Api-Token {v}'))


@prov
def p_pagerduty(rng):
    v = 'u+' + rs(rng, 18, ALNUM + '_-')
    return Spec('pagerduty_token', v, 'PAGERDUTY_TOKEN',
                curl=f"curl -H 'Accept: application/json' -H 'Authorization: Token token={v}' 'https://api.pagerduty.com/incidents'")


@prov
def p_opsgenie(rng):
    v = ruuid(rng)
    return Spec('opsgenie_api_key', v, 'OPSGENIE_API_KEY', curl=bearer(v, 'https://api.opsgenie.com/v2/alerts', 'Authorization: GenieKey {v}'))


@prov
def p_splunk_hec(rng):
    v = ruuid(rng, upper=True)
    return Spec('splunk_hec_token', v, 'SPLUNK_HEC_TOKEN',
                curl=f'curl -k https://http-inputs-{org(rng)}.splunkcloud.com:443/services/collector/event -H "Authorization: Splunk {v}" -d \'{{"event": "hello"}}\'')


@prov
def p_sumologic(rng):
    return Spec('sumologic_access_key', rs(rng, 64), 'SUMO_ACCESS_KEY', extras=[('SUMO_ACCESS_ID', 'su' + rs(rng, 12))])


@prov
def p_loggly(rng):
    v = f'https://logs-01.loggly.com/inputs/{ruuid(rng)}/tag/http/'
    return Spec('loggly_token_url', v, 'LOGGLY_URL', curl=f"curl -H 'content-type:text/plain' -d 'Hello' {v}")


@prov
def p_rollbar(rng):
    v = rs(rng, 32, HEX)
    return Spec('rollbar_token', v, 'ROLLBAR_ACCESS_TOKEN',
                curl=f'curl https://api.rollbar.com/api/1/deploy -F access_token={v} -F environment=production -F revision=$(git rev-parse HEAD)')


@prov
def p_bugsnag(rng):
    return Spec('bugsnag_auth_token', ruuid(rng), 'BUGSNAG_AUTH_TOKEN')


@prov
def p_launchdarkly_sdk(rng):
    return Spec('launchdarkly_sdk_key', 'sdk-' + ruuid(rng), 'LAUNCHDARKLY_SDK_KEY')


@prov
def p_launchdarkly_api(rng):
    v = 'api-' + ruuid(rng)
    return Spec('launchdarkly_api_token', v, 'LD_API_TOKEN', curl=bearer(v, 'https://app.launchdarkly.com/api/v2/flags/default', 'Authorization: {v}'))


@prov
def p_segment(rng):
    return Spec('segment_public_api_token', 'sgp_' + rs(rng, 64), 'SEGMENT_API_TOKEN')


@prov
def p_mixpanel(rng):
    return Spec('mixpanel_api_secret', rs(rng, 32, HEX), 'MIXPANEL_API_SECRET', extras=[('MIXPANEL_PROJECT_ID', str(rng.randint(10 ** 6, 4 * 10 ** 6)))])


@prov
def p_amplitude(rng):
    return Spec('amplitude_secret_key', rs(rng, 32, HEX), 'AMPLITUDE_SECRET_KEY', extras=[('AMPLITUDE_API_KEY', rs(rng, 32, HEX))])


@prov
def p_posthog_personal(rng):
    return Spec('posthog_personal_key', 'phx_' + rs(rng, 47), 'POSTHOG_PERSONAL_API_KEY')


@prov
def p_algolia_admin(rng):
    return Spec('algolia_admin_key', rs(rng, 32, HEX), 'ALGOLIA_ADMIN_API_KEY', extras=[('ALGOLIA_APP_ID', rs(rng, 10, UPALNUM))])


@prov
def p_elastic(rng):
    v = b64(f'{rs(rng, 20, B64U)}:{rs(rng, 22, B64U)}')
    return Spec('elastic_api_key', v, 'ELASTIC_API_KEY',
                extras=[('ELASTIC_CLOUD_ID', f'{proj(rng)}:' + b64(f'eu-west-1.aws.found.io$${rs(rng, 32, HEX)}$${rs(rng, 32, HEX)}'))],
                curl=bearer(v, 'https://my-deploy.es.eu-west-1.aws.found.io/_cat/indices', 'Authorization: ApiKey {v}'))


# =============================== databases ===============================
@prov
def p_mongodb_atlas(rng):
    v = f'mongodb+srv://{user(rng)}:{password(rng, 16, url_safe=True)}@cluster0.{rs(rng, 5, LOALNUM)}.mongodb.net/{proj(rng).replace("-", "_")}?retryWrites=true&w=majority'
    return Spec('mongodb_atlas_uri', v, 'MONGODB_URI')


@prov
def p_planetscale_pw(rng):
    v = f'mysql://{rs(rng, 20, LOALNUM)}:pscale_pw_{rs(rng, 43, B64U)}@aws.connect.psdb.cloud/{proj(rng)}?ssl={{"rejectUnauthorized":true}}'
    return Spec('planetscale_password', v, 'DATABASE_URL')


@prov
def p_planetscale_token(rng):
    return Spec('planetscale_service_token', 'pscale_tkn_' + rs(rng, 43, B64U), 'PLANETSCALE_SERVICE_TOKEN',
                extras=[('PLANETSCALE_SERVICE_TOKEN_ID', rs(rng, 12, LOALNUM))])


@prov
def p_supabase_service(rng):
    ref = rs(rng, 20, LO)
    t = ts(rng)
    v = jwt(rng, {'iss': 'supabase', 'ref': ref, 'role': 'service_role', 'iat': t, 'exp': t + 315360000})
    return Spec('supabase_service_role_jwt', v, 'SUPABASE_SERVICE_ROLE_KEY', extras=[('SUPABASE_URL', f'https://{ref}.supabase.co')])


@prov
def p_supabase_pat(rng):
    return Spec('supabase_access_token', 'sbp_' + rs(rng, 40, HEX), 'SUPABASE_ACCESS_TOKEN')


@prov
def p_neon(rng):
    return Spec('neon_api_key', 'napi_' + rs(rng, 64, LOALNUM), 'NEON_API_KEY')


@prov
def p_postgres_url(rng):
    v = f'postgresql://{proj(rng).replace("-", "_")}:{password(rng, 20, url_safe=True)}@db-{rng.randint(1, 9)}.{org(rng)}.internal:5432/{proj(rng).replace("-", "_")}'
    return Spec('postgres_url_password', v, 'DATABASE_URL')


@prov
def p_pgpass(rng):
    pw = password(rng)
    return Spec('pgpass_password', pw, 'PGPASSWORD', generic=False,
                natives=[('.pgpass', f'localhost:5432:*:postgres:{pw}\n', 'pgpass')])


@prov
def p_mycnf(rng):
    pw = password(rng)
    return Spec('mysql_my_cnf_password', pw, 'MYSQL_PWD', generic=False,
                natives=[('.my.cnf', f'[client]\nuser = {user(rng)}\npassword = "{pw}"\nhost = db.{org(rng)}.internal\n\n[mysql]\nauto-rehash\n', 'my-cnf')])


@prov
def p_amqp(rng):
    v = f'amqps://{proj(rng)}:{password(rng, 18, url_safe=True)}@rabbit.{org(rng)}.internal:5671/prod'
    return Spec('rabbitmq_url_password', v, 'AMQP_URL')


@prov
def p_smtp_password(rng):
    pw = password(rng)
    return Spec('smtp_password', pw, 'SMTP_PASSWORD', extras=[('SMTP_HOST', 'smtp.office365.com'), ('SMTP_USER', email(rng))])


@prov
def p_ldap_bind(rng):
    pw = password(rng)
    return Spec('ldap_bind_password', pw, 'LDAP_BIND_PASSWORD', extras=[('LDAP_BIND_DN', f'cn=svc-{proj(rng)},ou=services,dc={org(rng).replace("-", "")},dc=com')])


@prov
def p_netrc_generic(rng):
    pw = password(rng)
    return Spec('netrc_password', pw, 'NETRC', generic=False,
                natives=[('.netrc', netrc(f'ftp.{org(rng)}.com', user(rng), pw), 'netrc')])


@prov
def p_git_credentials_pw(rng):
    pw = password(rng, url_safe=True)
    return Spec('git_credentials_password', pw, 'GIT_PASSWORD', generic=False,
                natives=[('.git-credentials', f'https://{user(rng)}:{pw}@git.{org(rng)}.internal\n', 'git-credentials')])


@prov
def p_filezilla(rng):
    pw = password(rng)
    e = b64(pw)
    txt = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>\n<FileZilla3 version="3.66.4" platform="unix">\n  <Servers>\n'
           f'    <Server>\n      <Host>ftp.{org(rng)}.com</Host>\n      <Port>21</Port>\n      <Protocol>0</Protocol>\n      <Type>0</Type>\n'
           f'      <User>{user(rng)}</User>\n      <Pass encoding="base64">{e}</Pass>\n      <Logontype>1</Logontype>\n'
           f'      <Name>prod ftp</Name>\n    </Server>\n  </Servers>\n</FileZilla3>\n')
    return Spec('filezilla_base64_password', pw, 'FTP_PASSWORD', generic=False, needle=e,
                natives=[('.config/filezilla/sitemanager.xml', txt, 'filezilla-xml')])


@prov
def p_docker_registry_basic(rng):
    u = user(rng)
    pw = password(rng)
    reg = f'registry.{org(rng)}.io'
    a = b64(f'{u}:{pw}')
    return Spec('docker_registry_password', pw, 'REGISTRY_PASSWORD', generic=False, needle=a,
                natives=[('.docker/config.json', json.dumps({'auths': {reg: {'auth': a}}, 'currentContext': 'default'}, indent='\t') + '\n', 'docker-config')])


# =============================== AI ===============================
@prov
def p_openai_legacy(rng):
    v = 'sk-' + rs(rng, 20) + 'T3BlbkFJ' + rs(rng, 20)
    return Spec('openai_legacy', v, 'OPENAI_API_KEY', curl=bearer(v, 'https://api.openai.com/v1/models'))


@prov
def p_openai_project(rng):
    v = 'sk-proj-' + rs(rng, 74, ALNUM + '_-') + 'T3BlbkFJ' + rs(rng, 74, ALNUM + '_-')
    return Spec('openai_project', v, 'OPENAI_API_KEY', curl=bearer(v, 'https://api.openai.com/v1/chat/completions -d @req.json -H "Content-Type: application/json"'))


@prov
def p_openai_svcacct(rng):
    v = 'sk-svcacct-' + rs(rng, 74, ALNUM + '_-') + 'T3BlbkFJ' + rs(rng, 74, ALNUM + '_-')
    return Spec('openai_service_account', v, 'OPENAI_API_KEY')


@prov
def p_anthropic(rng):
    v = 'sk-ant-api03-' + rs(rng, 93, B64U) + 'AA'
    return Spec('anthropic', v, 'ANTHROPIC_API_KEY', curl=bearer(v, 'https://api.anthropic.com/v1/messages -H "anthropic-version: 2023-06-01" -d @msg.json', 'x-api-key: {v}'))


@prov
def p_anthropic_admin(rng):
    return Spec('anthropic_admin', 'sk-ant-admin01-' + rs(rng, 93, B64U) + 'AA', 'ANTHROPIC_ADMIN_KEY')


@prov
def p_huggingface(rng):
    v = 'hf_' + rs(rng, 34, UP + LO)
    return Spec('huggingface', v, 'HF_TOKEN', natives=[('.cache/huggingface/token', v, 'hf-token-file'),
                                                        ('.huggingface/token', v + '\n', 'hf-token-file')])


@prov
def p_cohere(rng):
    return Spec('cohere', rs(rng, 40), 'CO_API_KEY')


@prov
def p_replicate(rng):
    v = 'r8_' + rs(rng, 37)
    return Spec('replicate', v, 'REPLICATE_API_TOKEN', curl=bearer(v, 'https://api.replicate.com/v1/predictions', 'Authorization: Token {v}'))


@prov
def p_pinecone(rng):
    return Spec('pinecone', 'pcsk_' + rs(rng, 6) + '_' + rs(rng, 63), 'PINECONE_API_KEY')


@prov
def p_groq(rng):
    return Spec('groq', 'gsk_' + rs(rng, 52), 'GROQ_API_KEY')


@prov
def p_perplexity(rng):
    return Spec('perplexity', 'pplx-' + rs(rng, 48), 'PERPLEXITY_API_KEY')


@prov
def p_openrouter(rng):
    return Spec('openrouter', 'sk-or-v1-' + rs(rng, 64, HEX), 'OPENROUTER_API_KEY')


@prov
def p_xai(rng):
    return Spec('xai', 'xai-' + rs(rng, 80), 'XAI_API_KEY')


@prov
def p_langsmith(rng):
    return Spec('langsmith', 'lsv2_pt_' + rs(rng, 32, HEX) + '_' + rs(rng, 10, HEX), 'LANGCHAIN_API_KEY')


@prov
def p_mistral(rng):
    return Spec('mistral', rs(rng, 32), 'MISTRAL_API_KEY')


@prov
def p_elevenlabs(rng):
    return Spec('elevenlabs', 'sk_' + rs(rng, 48, HEX), 'ELEVENLABS_API_KEY')


@prov
def p_deepgram(rng):
    v = rs(rng, 40, HEX)
    return Spec('deepgram', v, 'DEEPGRAM_API_KEY', curl=bearer(v, 'https://api.deepgram.com/v1/projects', 'Authorization: Token {v}'))


@prov
def p_wandb(rng):
    v = rs(rng, 40, HEX)
    return Spec('wandb_api_key', v, 'WANDB_API_KEY', natives=[('.netrc', netrc('api.wandb.ai', 'user', v), 'netrc')])


@prov
def p_kaggle(rng):
    v = rs(rng, 32, HEX)
    js = json.dumps({'username': user(rng) + str(rng.randint(1, 99)), 'key': v}) + '\n'
    return Spec('kaggle_key', v, 'KAGGLE_KEY', natives=[('.kaggle/kaggle.json', js, 'kaggle-json'), ('.config/kaggle/kaggle.json', js, 'kaggle-json')])


# =============================== package registries & dev tooling ===============================
@prov
def p_npm(rng):
    v = crc_token(rng, 'npm_')
    return Spec('npm_token', v, 'NPM_TOKEN',
                natives=[('.npmrc', f'//registry.npmjs.org/:_authToken={v}\nfund=false\n', 'npmrc'),
                         ('.yarnrc.yml', f'npmRegistryServer: "https://registry.npmjs.org"\nnpmAuthToken: "{v}"\n', 'yarnrc')])


@prov
def p_pypi(rng):
    mac = (b'\x02\x01\x08pypi.org\x02\x25' + ruuid(rng).encode() + b'\x00\x02\x06\x00\x02\x2b' +
           json.dumps({'version': 1, 'permissions': 'user'}).encode() + b'\x00\x02\x20' + rbytes(rng, 32) + b'\x00\x00\x06\x20' + rbytes(rng, 32))
    v = 'pypi-' + b64u(mac)
    return Spec('pypi_token', v, 'TWINE_PASSWORD', extras=[('TWINE_USERNAME', '__token__')],
                natives=[('.pypirc', f'[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = {v}\n', 'pypirc')])


@prov
def p_rubygems(rng):
    v = 'rubygems_' + rs(rng, 48, HEX)
    return Spec('rubygems_api_key', v, 'GEM_HOST_API_KEY', natives=[('.gem/credentials', f'---\n:rubygems_api_key: {v}\n', 'gem-credentials')])


@prov
def p_nuget(rng):
    v = 'oy2' + rs(rng, 43, LOALNUM)
    return Spec('nuget_api_key', v, 'NUGET_API_KEY',
                curl=f'dotnet nuget push bin/Release/{proj(rng)}.1.4.2.nupkg --api-key {v} --source https://api.nuget.org/v3/index.json')


@prov
def p_crates(rng):
    v = 'cio' + rs(rng, 32)
    return Spec('crates_io_token', v, 'CARGO_REGISTRY_TOKEN', natives=[('.cargo/credentials.toml', f'[registry]\ntoken = "{v}"\n', 'cargo-credentials')])


@prov
def p_dockerhub(rng):
    v = 'dckr_pat_' + rs(rng, 27, B64U)
    u = user(rng)
    return Spec('dockerhub_pat', v, 'DOCKERHUB_TOKEN', needle='"auth":', extras=[('DOCKERHUB_USERNAME', u)],
                curl=f'echo {v} | docker login -u {u} --password-stdin',
                natives=[('.docker/config.json', json.dumps({'auths': {'https://index.docker.io/v1/': {'auth': b64(f'{u}:{v}')}}}, indent='\t') + '\n', 'docker-config')])


@prov
def p_jfrog_api(rng):
    return Spec('jfrog_api_key', 'AKCp' + rs(rng, 69), 'ARTIFACTORY_API_KEY')


@prov
def p_jfrog_ref(rng):
    v = b64(f'reftkn:01:{rng.randint(1_750_000_000, 1_999_999_999)}:{rs(rng, 27)}')
    return Spec('jfrog_reference_token', v, 'JFROG_ACCESS_TOKEN', extras=[('JFROG_URL', f'https://{org(rng)}.jfrog.io')],
                curl=bearer(v, f'https://{org(rng)}.jfrog.io/artifactory/api/repositories'))


@prov
def p_maven_settings(rng):
    pw = rs(rng, 44, B64U)
    txt = (f'<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">\n  <servers>\n    <server>\n      <id>ossrh</id>\n'
           f'      <username>{rs(rng, 8)}</username>\n      <password>{pw}</password>\n    </server>\n  </servers>\n</settings>\n')
    return Spec('sonatype_user_token', pw, 'OSSRH_PASSWORD', generic=False,
                natives=[('.m2/settings.xml', txt, 'maven-settings'),
                         ('.gradle/gradle.properties', f'org.gradle.jvmargs=-Xmx2g\nossrhUsername={rs(rng, 8)}\nossrhPassword={pw}\n', 'gradle-properties')])


@prov
def p_snyk(rng):
    v = ruuid(rng)
    return Spec('snyk_token', v, 'SNYK_TOKEN', natives=[('.config/configstore/snyk.json', json.dumps({'api': v}, indent=2) + '\n', 'snyk-config')])


@prov
def p_sonarqube(rng):
    return Spec('sonarqube_token', 'squ_' + rs(rng, 40, HEX), 'SONAR_TOKEN', extras=[('SONAR_HOST_URL', f'https://sonar.{org(rng)}.com')])


@prov
def p_sonarcloud(rng):
    v = rs(rng, 40, HEX)
    return Spec('sonarcloud_token', v, 'SONAR_TOKEN', extras=[('SONAR_ORGANIZATION', org(rng))],
                curl=f'curl -u {v}: https://sonarcloud.io/api/projects/search?organization={org(rng)}')


@prov
def p_codecov(rng):
    return Spec('codecov_token', ruuid(rng), 'CODECOV_TOKEN')


@prov
def p_circleci(rng):
    v = 'CCIPAT_' + rs(rng, 22) + '_' + rs(rng, 40, HEX)
    return Spec('circleci_pat', v, 'CIRCLECI_TOKEN', natives=[('.circleci/cli.yml', f'host: https://circleci.com\nendpoint: graphql-unstable\ntoken: {v}\nrest_endpoint: api/v2\n', 'circleci-cli')])


@prov
def p_travis(rng):
    v = rs(rng, 22, B64U)
    return Spec('travis_token', v, 'TRAVIS_API_TOKEN',
                natives=[('.travis/config.yml', f'endpoints:\n  https://api.travis-ci.com/:\n    access_token: {v}\ndefault_endpoint: https://api.travis-ci.com/\n', 'travis-config')])


@prov
def p_buildkite_api(rng):
    v = 'bkua_' + rs(rng, 40, HEX)
    return Spec('buildkite_api_token', v, 'BUILDKITE_API_TOKEN', curl=bearer(v, 'https://api.buildkite.com/v2/user'))


@prov
def p_buildkite_agent(rng):
    return Spec('buildkite_agent_token', rs(rng, 50, HEX), 'BUILDKITE_AGENT_TOKEN')


@prov
def p_drone(rng):
    return Spec('drone_token', rs(rng, 32), 'DRONE_TOKEN', extras=[('DRONE_SERVER', f'https://drone.{org(rng)}.com')])


@prov
def p_terraform_cloud(rng):
    v = rs(rng, 14) + '.atlasv1.' + rs(rng, 67)
    return Spec('terraform_cloud_token', v, 'TFE_TOKEN',
                natives=[('.terraform.d/credentials.tfrc.json', json.dumps({'credentials': {'app.terraform.io': {'token': v}}}, indent=2) + '\n', 'terraform-credentials'),
                         ('.terraformrc', f'plugin_cache_dir = "$HOME/.terraform.d/plugin-cache"\n\ncredentials "app.terraform.io" {{\n  token = "{v}"\n}}\n', 'terraformrc')])


@prov
def p_vault_service(rng):
    v = 'hvs.' + rs(rng, 24)
    return Spec('vault_service_token', v, 'VAULT_TOKEN', extras=[('VAULT_ADDR', f'https://vault.{org(rng)}.internal:8200')],
                natives=[('.vault-token', v, 'vault-token-file')], curl=bearer(v, 'https://vault.internal:8200/v1/secret/data/app', 'X-Vault-Token: {v}'))


@prov
def p_vault_long(rng):
    v = 'hvs.CAESI' + rs(rng, 86, B64U)
    return Spec('vault_service_token_long', v, 'VAULT_TOKEN')


@prov
def p_vault_batch(rng):
    return Spec('vault_batch_token', 'hvb.AAAAAQ' + rs(rng, 132, B64U), 'VAULT_TOKEN')


@prov
def p_doppler_service(rng):
    return Spec('doppler_service_token', f'dp.st.{rng.choice(["prd", "dev", "stg"])}.' + rs(rng, 40), 'DOPPLER_TOKEN')


@prov
def p_doppler_personal(rng):
    return Spec('doppler_personal_token', 'dp.pt.' + rs(rng, 43), 'DOPPLER_TOKEN')


@prov
def p_pulumi(rng):
    v = 'pul-' + rs(rng, 40, HEX)
    return Spec('pulumi_token', v, 'PULUMI_ACCESS_TOKEN',
                natives=[('.pulumi/credentials.json', json.dumps({'current': 'https://api.pulumi.com', 'accessTokens': {'https://api.pulumi.com': v},
                                                                  'accounts': {'https://api.pulumi.com': {'accessToken': v, 'username': user(rng)}}}, indent=4) + '\n', 'pulumi-credentials')])


@prov
def p_1password_sa(rng):
    payload = {'signInAddress': 'my.1password.com', 'userAuth': {'method': 'SRPg-4096', 'alg': 'PBES2g-HS256', 'iterations': 650000, 'salt': rs(rng, 22, B64U)},
               'email': f'{rs(rng, 13, LO)}@1passwordserviceaccounts.com', 'srpX': rs(rng, 64, HEX),
               'muk': {'alg': 'A256GCM', 'ext': False, 'k': rs(rng, 43, B64U), 'key_ops': ['encrypt', 'decrypt'], 'kty': 'oct', 'kid': 'mp'},
               'secretKey': f'A3-{rs(rng, 6, UPALNUM)}-{rs(rng, 6, UPALNUM)}-{rs(rng, 5, UPALNUM)}-{rs(rng, 5, UPALNUM)}-{rs(rng, 5, UPALNUM)}-{rs(rng, 5, UPALNUM)}',
               'throttleSecret': {'seed': rs(rng, 64, HEX), 'uuid': rs(rng, 26, UPALNUM)}, 'deviceUuid': rs(rng, 26, LOALNUM)}
    return Spec('1password_service_account', 'ops_' + b64u(json.dumps(payload, separators=(',', ':'))), 'OP_SERVICE_ACCOUNT_TOKEN')


@prov
def p_1password_connect(rng):
    v = jwt(rng, {'1password.com/auuid': rs(rng, 26, UPALNUM), '1password.com/token': rs(rng, 32, B64U), '1password.com/fts': ['vaultaccess'],
                  '1password.com/vts': [{'u': rs(rng, 26, LOALNUM), 'a': 240}], 'aud': ['com.1password.connect'], 'sub': rs(rng, 26, UPALNUM),
                  'iat': ts(rng), 'iss': 'com.1password.b5'}, alg='ES256', kid=rs(rng, 26, LOALNUM))
    return Spec('1password_connect_token', v, 'OP_CONNECT_TOKEN', extras=[('OP_CONNECT_HOST', 'http://localhost:8080')])


@prov
def p_okta(rng):
    v = '00' + rs(rng, 40, B64U)
    return Spec('okta_api_token', v, 'OKTA_API_TOKEN', extras=[('OKTA_ORG_URL', f'https://{org(rng)}.okta.com')],
                curl=f'curl -H "Accept: application/json" -H "Authorization: SSWS {v}" "https://{org(rng)}.okta.com/api/v1/users?limit=25"')


@prov
def p_auth0_secret(rng):
    return Spec('auth0_client_secret', rs(rng, 64, B64U), 'AUTH0_CLIENT_SECRET',
                extras=[('AUTH0_DOMAIN', f'{org(rng)}.eu.auth0.com'), ('AUTH0_CLIENT_ID', rs(rng, 32))])


@prov
def p_auth0_mgmt(rng):
    t = ts(rng)
    dom = f'{org(rng)}.us.auth0.com'
    v = jwt(rng, {'iss': f'https://{dom}/', 'sub': f'{rs(rng, 32)}@clients', 'aud': f'https://{dom}/api/v2/', 'iat': t, 'exp': t + 86400,
                  'scope': 'read:users update:users delete:users create:users read:clients', 'gty': 'client-credentials', 'azp': rs(rng, 32)},
            alg='RS256', kid=rs(rng, 22, B64U))
    return Spec('auth0_management_jwt', v, 'AUTH0_MGMT_TOKEN', curl=bearer(v, f'https://{dom}/api/v2/users'))


@prov
def p_clerk(rng):
    return Spec('clerk_secret_key', 'sk_live_' + rs(rng, 42), 'CLERK_SECRET_KEY', extras=[('NEXT_PUBLIC_CLERK_PUBLISHABLE_KEY', 'pk_live_' + b64('clerk.' + org(rng) + '.com$'))])


@prov
def p_databricks(rng):
    v = 'dapi' + rs(rng, 32, HEX) + rng.choice(['', '-2', '-3'])
    host = f'https://adb-{rng.randint(10**15, 10**16)}.{rng.randint(1, 19)}.azuredatabricks.net'
    return Spec('databricks_token', v, 'DATABRICKS_TOKEN', extras=[('DATABRICKS_HOST', host)],
                natives=[('.databrickscfg', f'[DEFAULT]\nhost  = {host}\ntoken = {v}\n', 'databrickscfg')])


@prov
def p_prefect(rng):
    return Spec('prefect_api_key', 'pnu_' + rs(rng, 36), 'PREFECT_API_KEY')


@prov
def p_dbt(rng):
    return Spec('dbt_cloud_token', 'dbtc_' + rs(rng, 40, B64U), 'DBT_CLOUD_API_TOKEN')


@prov
def p_deno(rng):
    return Spec('deno_deploy_token', 'ddp_' + rs(rng, 36), 'DENO_DEPLOY_TOKEN')


@prov
def p_expo(rng):
    return Spec('expo_token', rs(rng, 40, B64U), 'EXPO_TOKEN')


@prov
def p_browserstack(rng):
    return Spec('browserstack_key', rs(rng, 20), 'BROWSERSTACK_ACCESS_KEY', extras=[('BROWSERSTACK_USERNAME', user(rng) + '_' + rs(rng, 5, LOALNUM))])


@prov
def p_saucelabs(rng):
    return Spec('saucelabs_key', ruuid(rng), 'SAUCE_ACCESS_KEY', extras=[('SAUCE_USERNAME', 'oauth-' + email(rng).split('@')[0] + '-' + rs(rng, 5, HEX))])


@prov
def p_harness(rng):
    return Spec('harness_pat', f'pat.{rs(rng, 22, B64U)}.{rs(rng, 24, HEX)}.{rs(rng, 20)}', 'HARNESS_API_KEY')


@prov
def p_scalingo(rng):
    return Spec('scalingo_token', 'tk-us-' + rs(rng, 48, B64U), 'SCALINGO_API_TOKEN')


@prov
def p_clojars(rng):
    return Spec('clojars_token', 'CLOJARS_' + rs(rng, 60, HEX), 'CLOJARS_PASSWORD', extras=[('CLOJARS_USERNAME', user(rng))])


@prov
def p_octopus(rng):
    return Spec('octopus_api_key', 'API-' + rs(rng, 26, UPALNUM), 'OCTOPUS_API_KEY')


@prov
def p_infracost(rng):
    return Spec('infracost_key', 'ico-' + rs(rng, 32), 'INFRACOST_API_KEY')


@prov
def p_mux(rng):
    return Spec('mux_token_secret', rs(rng, 75, B64), 'MUX_TOKEN_SECRET', extras=[('MUX_TOKEN_ID', ruuid(rng))])


@prov
def p_cloudinary(rng):
    return Spec('cloudinary_url', f'cloudinary://{rs(rng, 15, DIG)}:{rs(rng, 27, B64U)}@{org(rng)}', 'CLOUDINARY_URL')


@prov
def p_beamer(rng):
    return Spec('beamer_key', 'b_' + rs(rng, 44, LOALNUM + '_-=') , 'BEAMER_API_KEY')


# =============================== social / consumer APIs ===============================
@prov
def p_mapbox_secret(rng):
    v = 'sk.' + b64u(json.dumps({'u': user(rng), 'a': 'cl' + rs(rng, 23, LOALNUM)}, separators=(',', ':'))) + '.' + rs(rng, 22, B64U)
    return Spec('mapbox_secret_token', v, 'MAPBOX_SECRET_TOKEN',
                natives=[('.netrc', netrc('api.mapbox.com', 'mapbox', v), 'netrc')])


@prov
def p_facebook(rng):
    v = 'EAA' + rng.choice('BCDGIJ') + rs(rng, 180)
    return Spec('facebook_access_token', v, 'FACEBOOK_ACCESS_TOKEN', curl=f'curl -G "https://graph.facebook.com/v19.0/me/accounts" -d "access_token={v}"')


@prov
def p_instagram(rng):
    return Spec('instagram_access_token', 'IGQVJ' + rs(rng, 190, B64U), 'INSTAGRAM_ACCESS_TOKEN')


@prov
def p_twitter_bearer(rng):
    mid = rs(rng, rng.randint(5, 10)) + rng.choice(['%2B', '%2F']) + rs(rng, rng.randint(5, 10)) + rng.choice(['%2B', '%2F']) + \
        rs(rng, rng.randint(10, 16)) + '%3D' + rs(rng, 50)
    v = 'A' * 21 + rs(rng, 4, UP + LO) + 'A' * 7 + mid
    return Spec('twitter_bearer_token', v, 'TWITTER_BEARER_TOKEN', curl=bearer(v, '"https://api.twitter.com/2/tweets/search/recent?query=from:nasa"'))


@prov
def p_linkedin(rng):
    return Spec('linkedin_client_secret', 'WPL_AP1.' + rs(rng, 16) + '.' + rs(rng, 22, B64) + '==', 'LINKEDIN_CLIENT_SECRET',
                extras=[('LINKEDIN_CLIENT_ID', rs(rng, 14, LOALNUM))])


@prov
def p_jwt_internal(rng):
    t = ts(rng)
    v = jwt(rng, {'sub': str(rng.randint(1000, 99999)), 'name': f'{user(rng).title()} {rng.choice(["Smith", "Nguyen", "Okafor", "Muller"])}',
                  'email': email(rng), 'role': 'admin', 'iat': t, 'exp': t + 7 * 86400, 'iss': f'https://auth.{org(rng)}.com'})
    return Spec('jwt_bearer_internal', v, 'API_TOKEN', curl=bearer(v, f'https://api.{org(rng)}.com/v1/admin/users'))


@prov
def p_k8s_sa_token(rng):
    t = ts(rng)
    ns = rng.choice(['default', 'ci', 'monitoring'])
    sa = rng.choice(['deployer', 'gitlab-ci', 'argocd-manager'])
    v = jwt(rng, {'aud': ['https://kubernetes.default.svc.cluster.local'], 'exp': t + 31536000, 'iat': t, 'iss': 'https://kubernetes.default.svc.cluster.local',
                  'kubernetes.io': {'namespace': ns, 'serviceaccount': {'name': sa, 'uid': ruuid(rng)}}, 'nbf': t,
                  'sub': f'system:serviceaccount:{ns}:{sa}'}, alg='RS256', kid=rs(rng, 43, B64U))
    cluster = f'{org(rng)}-prod'
    kc = (f'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://k8s.{org(rng)}.internal:6443\n    insecure-skip-tls-verify: true\n'
          f'  name: {cluster}\ncontexts:\n- context:\n    cluster: {cluster}\n    user: {sa}\n  name: {cluster}\ncurrent-context: {cluster}\n'
          f'users:\n- name: {sa}\n  user:\n    token: {v}\n')
    return Spec('kubernetes_sa_token', v, 'KUBE_TOKEN', natives=[('.kube/config', kc, 'kubeconfig')])


@prov
def p_kube_client_key(rng):
    k = pem_trad(ec_key(rng))
    cert = self_signed_cert(rng, 'kubernetes-admin')
    cluster = rng.choice(['kind-dev', 'minikube', 'k3s-home'])
    kc = (f'apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: {b64(self_signed_cert(rng, "kubernetes-ca"))}\n'
          f'    server: https://127.0.0.1:{rng.randint(30000, 45000)}\n  name: {cluster}\ncontexts:\n- context:\n    cluster: {cluster}\n'
          f'    user: {cluster}-admin\n  name: {cluster}\ncurrent-context: {cluster}\nkind: Config\npreferences: {{}}\nusers:\n- name: {cluster}-admin\n'
          f'  user:\n    client-certificate-data: {b64(cert)}\n    client-key-data: {b64(k)}\n')
    return Spec('kubeconfig_client_key', k, 'KUBE_CLIENT_KEY', generic=False, needle='client-key-data:', natives=[('.kube/config', kc, 'kubeconfig-base64-key')])


# =============================== private keys & age ===============================
@prov
def p_ssh_rsa(rng):
    k = rsa_key(rng, 2048)
    c = f'{user(rng)}@{rng.choice(["laptop", "workstation", "mbp"])}'
    return Spec('ssh_rsa_private_key', openssh_private(k, c, rng), 'SSH_KEY', generic=False, needle='-----BEGIN OPENSSH PRIVATE KEY-----',
                natives=[('.ssh/id_rsa', openssh_private(k, c, rng), 'ssh-private-key'), ('.ssh/deploy_key', openssh_private(k, c, rng), 'ssh-private-key')])


@prov
def p_ssh_ed25519(rng):
    k = ed_key(rng)
    c = f'{user(rng)}@{rng.choice(["laptop", "workstation", "mbp"])}'
    pk = openssh_private(k, c, rng)
    return Spec('ssh_ed25519_private_key', pk, 'SSH_KEY', generic=False, needle='-----BEGIN OPENSSH PRIVATE KEY-----',
                natives=[('.ssh/id_ed25519', pk, 'ssh-private-key'), (f'.ssh/{org(rng)}_github', pk, 'ssh-private-key')])


@prov
def p_ppk(rng):
    k = ed_key(rng)
    t = ppk_v3_ed25519(k, f'{user(rng)}@windows')
    return Spec('putty_private_key', t, 'PPK', generic=False, needle='PuTTY-User-Key-File-3',
                natives=[('Documents/keys/server.ppk', t.replace('\n', '\r\n'), 'ppk-crlf')])


@prov
def p_ec_pem(rng):
    k = pem_trad(ec_key(rng))
    return Spec('ec_private_key_pem', k, 'TLS_KEY', generic=False, needle='-----BEGIN EC PRIVATE KEY-----',
                natives=[(f'code/{proj(rng)}/certs/server.key', k, 'pem-file')])


@prov
def p_pkcs8_pem(rng):
    k = pem_pkcs8(ed_key(rng))
    return Spec('pkcs8_private_key_pem', k, 'SIGNING_KEY', generic=False, needle='-----BEGIN PRIVATE KEY-----',
                natives=[(f'code/{proj(rng)}/config/jwt-signing.pem', k, 'pem-file')])


@prov
def p_apple_p8(rng):
    k = pem_pkcs8(ec_key(rng))
    kid = rs(rng, 10, UPALNUM)
    return Spec('apple_p8_key', k, 'APPLE_KEY', generic=False, needle='-----BEGIN PRIVATE KEY-----',
                natives=[(f'Downloads/AuthKey_{kid}.p8', k, 'pem-file')])


@prov
def p_age(rng):
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
    from cryptography.hazmat.primitives import serialization as s
    raw = rbytes(rng, 32)
    sk = bech32('age-secret-key-', raw).upper()
    pub = bech32('age', X25519PrivateKey.from_private_bytes(raw).public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw))
    txt = f'# created: 2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T10:2{rng.randint(0, 9)}:00+01:00\n# public key: {pub}\n{sk}\n'
    return Spec('age_secret_key', sk, 'SOPS_AGE_KEY', natives=[('.config/sops/age/keys.txt', txt, 'age-keys')])
