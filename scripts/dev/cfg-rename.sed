# rd_system_cfg (src/core/config.h): the fields that moved into sub-structs (issue 22).
# Usage: sed -E -i -f scripts/dev/cfg-rename.sed FILE...
#
# Rewrites an access through the usual names of a config pointer: cfg-> and sys-> (also
# x->cfg->, x.ctx.cfg->, x->sys->), c.systems[i]. and config_find(...)->, and, for the
# fields where no other struct of the tree has a field of that name reached the same way,
# c->, s-> and a->. Idempotent: a second run changes nothing. Not rewritten (the build
# says where): designated initializers (.core = X becomes .core.url = X, .auth = X
# becomes .core.auth = X), and the one-letter names a rule below leaves out for a field
# (s->store, s->broker, s->prefix, s->password, s->dlq, a->dlq, a->auth, a->token,
# c->theme are other structs' fields in the tree).
#
# old field            new field
#   store                store.url
#   store_user           store.user
#   store_password       store.password
#   store_cacert         store.tls.cacert
#   store_cert           store.tls.cert
#   store_key            store.tls.key
#   store_insecure       store.tls.insecure
#   store_sslmode        store.ssl.mode
#   store_sslrootcert    store.ssl.rootcert
#   store_sslcert        store.ssl.cert
#   store_sslkey         store.ssl.key
#   schema               store.schema
#   broker               broker.url
#   broker_user          broker.user
#   broker_password      broker.password
#   broker_vhost         broker.vhost
#   dlq                  broker.dlq
#   queues               broker.queues
#   sqs_queue_url        sqs.queue_url
#   sqs_region           sqs.region
#   sqs_endpoint         sqs.endpoint
#   sqs_dlq              sqs.dlq
#   aws_profile          sqs.aws_profile
#   core                 core.url
#   auth                 core.auth
#   token                core.token
#   token_command        core.token_command
#   login                core.login
#   password             core.password
#   api_key_header       core.api_key_header
#   dev_user             core.dev_user
#   core_probe_s         core.probe_s
#   cacert               http.cacert
#   insecure             http.insecure
#   banner               ui.banner
#   theme                ui.theme
#   keymap               ui.keymap
#   clipboard            ui.clipboard
#   page_size            ui.page_size
#   confirm_over         ui.confirm_over
#   confirm_quit         ui.confirm_quit
#   prefix               alakai.prefix
#   max_retries          alakai.max_retries
#   orphan_after_s       alakai.orphan_after_s
# Unchanged: name, line, profile, workers, journal_syslog, read_only, local, poll_s,
# rate_limit, execution_timeout_s, health, fleet, file, key_lines.
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_sslrootcert\b/\1store.ssl.rootcert/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)broker_password\b/\1broker.password/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_password\b/\1store.password/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_insecure\b/\1store.tls.insecure/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)api_key_header\b/\1core.api_key_header/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)orphan_after_s\b/\1alakai.orphan_after_s/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_sslmode\b/\1store.ssl.mode/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_sslcert\b/\1store.ssl.cert/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)sqs_queue_url\b/\1sqs.queue_url/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)token_command\b/\1core.token_command/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_cacert\b/\1store.tls.cacert/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_sslkey\b/\1store.ssl.key/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)broker_vhost\b/\1broker.vhost/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)sqs_endpoint\b/\1sqs.endpoint/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)core_probe_s\b/\1core.probe_s/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)confirm_over\b/\1ui.confirm_over/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)confirm_quit\b/\1ui.confirm_quit/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)broker_user\b/\1broker.user/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)aws_profile\b/\1sqs.aws_profile/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)max_retries\b/\1alakai.max_retries/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_user\b/\1store.user/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_cert\b/\1store.tls.cert/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)sqs_region\b/\1sqs.region/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store_key\b/\1store.tls.key/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)clipboard\b/\1ui.clipboard/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)page_size\b/\1ui.page_size/g
s/(\b(cfg|sys|c|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)password\b/\1core.password/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)dev_user\b/\1core.dev_user/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)insecure\b/\1http.insecure/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)sqs_dlq\b/\1sqs.dlq/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)schema\b/\1store.schema/g
s/(\b(cfg|sys|c|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)broker([^._[:alnum:]]|$)/\1broker.url\3/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)queues\b/\1broker.queues/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)cacert\b/\1http.cacert/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)banner\b/\1ui.banner/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)keymap\b/\1ui.keymap/g
s/(\b(cfg|sys|c|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)prefix\b/\1alakai.prefix/g
s/(\b(cfg|sys|c|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)store([^._[:alnum:]]|$)/\1store.url\3/g
s/(\b(cfg|sys|c|s)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)token\b/\1core.token/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)login\b/\1core.login/g
s/(\b(cfg|sys|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)theme\b/\1ui.theme/g
s/(\b(cfg|sys|c|s|a)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)core([^._[:alnum:]]|$)/\1core.url\3/g
s/(\b(cfg|sys|c|s)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)auth\b/\1core.auth/g
s/(\b(cfg|sys|c)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)dlq\b/\1broker.dlq/g
s/(\bs->core\.auth, "jwt-login"\) == 0 && !s->)password\b/\1core.password/g
s/(\b(ctx->cfg|cfg|sys|c)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)push_min_interval_s\b/\1store.push_min_interval_s/g
s/(\b(ctx->cfg|cfg|sys|c)->|\.systems\[[^]]*\]\.|config_find\([^)]*\)->)push\b/\1store.push/g
