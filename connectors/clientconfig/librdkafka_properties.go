package clientconfig

// libRole is the C/P/* column of librdkafka's CONFIGURATION.md.
type libRole uint8

const (
	libBoth libRole = iota
	libConsumer
	libProducer
)

// libKind is the value type of a librdkafka property.
type libKind uint8

const (
	libString libKind = iota
	libInt
	libFloat
	libBool
	libEnum
)

// libProperty describes one librdkafka property: who accepts it and which
// values it accepts. min and max bound libInt and libFloat values; values
// lists the accepted libEnum values (compared case-insensitively, as librdkafka
// does).
type libProperty struct {
	role     libRole
	kind     libKind
	min, max float64
	values   []string
}

// libProperties lists the properties of librdkafka v2.11.1 (the build bundled
// with confluent-kafka-go v2.11.1), global and topic-level, as documented in
// that tag's CONFIGURATION.md. Properties only settable through the C API
// (callbacks, opaque pointers) are left out: they cannot come from a config.
// A name present in both tables keeps its global entry.
var libProperties = map[string]libProperty{
	"builtin.features":                                  {role: libBoth, kind: libString},
	"client.id":                                         {role: libBoth, kind: libString},
	"metadata.broker.list":                              {role: libBoth, kind: libString},
	"bootstrap.servers":                                 {role: libBoth, kind: libString},
	"message.max.bytes":                                 {role: libBoth, kind: libInt, min: 1000, max: 1000000000},
	"message.copy.max.bytes":                            {role: libBoth, kind: libInt, min: 0, max: 1000000000},
	"receive.message.max.bytes":                         {role: libBoth, kind: libInt, min: 1000, max: 2147483647},
	"max.in.flight.requests.per.connection":             {role: libBoth, kind: libInt, min: 1, max: 1000000},
	"max.in.flight":                                     {role: libBoth, kind: libInt, min: 1, max: 1000000},
	"metadata.recovery.strategy":                        {role: libBoth, kind: libEnum, values: []string{"none", "rebootstrap"}},
	"metadata.recovery.rebootstrap.trigger.ms":          {role: libBoth, kind: libInt, min: 0, max: 2147483647},
	"topic.metadata.refresh.interval.ms":                {role: libBoth, kind: libInt, min: -1, max: 3600000},
	"metadata.max.age.ms":                               {role: libBoth, kind: libInt, min: 1, max: 86400000},
	"topic.metadata.refresh.fast.interval.ms":           {role: libBoth, kind: libInt, min: 1, max: 60000},
	"topic.metadata.refresh.fast.cnt":                   {role: libBoth, kind: libInt, min: 0, max: 1000},
	"topic.metadata.refresh.sparse":                     {role: libBoth, kind: libBool},
	"topic.metadata.propagation.max.ms":                 {role: libBoth, kind: libInt, min: 0, max: 3600000},
	"topic.blacklist":                                   {role: libBoth, kind: libString},
	"debug":                                             {role: libBoth, kind: libString},
	"socket.timeout.ms":                                 {role: libBoth, kind: libInt, min: 10, max: 300000},
	"socket.blocking.max.ms":                            {role: libBoth, kind: libInt, min: 1, max: 60000},
	"socket.send.buffer.bytes":                          {role: libBoth, kind: libInt, min: 0, max: 100000000},
	"socket.receive.buffer.bytes":                       {role: libBoth, kind: libInt, min: 0, max: 100000000},
	"socket.keepalive.enable":                           {role: libBoth, kind: libBool},
	"socket.nagle.disable":                              {role: libBoth, kind: libBool},
	"socket.max.fails":                                  {role: libBoth, kind: libInt, min: 0, max: 1000000},
	"broker.address.ttl":                                {role: libBoth, kind: libInt, min: 0, max: 86400000},
	"broker.address.family":                             {role: libBoth, kind: libEnum, values: []string{"any", "v4", "v6"}},
	"socket.connection.setup.timeout.ms":                {role: libBoth, kind: libInt, min: 1000, max: 2147483647},
	"connections.max.idle.ms":                           {role: libBoth, kind: libInt, min: 0, max: 2147483647},
	"reconnect.backoff.jitter.ms":                       {role: libBoth, kind: libInt, min: 0, max: 3600000},
	"reconnect.backoff.ms":                              {role: libBoth, kind: libInt, min: 0, max: 3600000},
	"reconnect.backoff.max.ms":                          {role: libBoth, kind: libInt, min: 0, max: 3600000},
	"statistics.interval.ms":                            {role: libBoth, kind: libInt, min: 0, max: 86400000},
	"enabled_events":                                    {role: libBoth, kind: libInt, min: 0, max: 2147483647},
	"log_level":                                         {role: libBoth, kind: libInt, min: 0, max: 7},
	"log.queue":                                         {role: libBoth, kind: libBool},
	"log.thread.name":                                   {role: libBoth, kind: libBool},
	"enable.random.seed":                                {role: libBoth, kind: libBool},
	"log.connection.close":                              {role: libBoth, kind: libBool},
	"internal.termination.signal":                       {role: libBoth, kind: libInt, min: 0, max: 128},
	"api.version.request":                               {role: libBoth, kind: libBool},
	"api.version.request.timeout.ms":                    {role: libBoth, kind: libInt, min: 1, max: 300000},
	"api.version.fallback.ms":                           {role: libBoth, kind: libInt, min: 0, max: 604800000},
	"broker.version.fallback":                           {role: libBoth, kind: libString},
	"allow.auto.create.topics":                          {role: libBoth, kind: libBool},
	"security.protocol":                                 {role: libBoth, kind: libEnum, values: []string{"plaintext", "ssl", "sasl_plaintext", "sasl_ssl"}},
	"ssl.cipher.suites":                                 {role: libBoth, kind: libString},
	"ssl.curves.list":                                   {role: libBoth, kind: libString},
	"ssl.sigalgs.list":                                  {role: libBoth, kind: libString},
	"ssl.key.location":                                  {role: libBoth, kind: libString},
	"ssl.key.password":                                  {role: libBoth, kind: libString},
	"ssl.key.pem":                                       {role: libBoth, kind: libString},
	"ssl.certificate.location":                          {role: libBoth, kind: libString},
	"ssl.certificate.pem":                               {role: libBoth, kind: libString},
	"ssl.ca.location":                                   {role: libBoth, kind: libString},
	"https.ca.location":                                 {role: libBoth, kind: libString},
	"https.ca.pem":                                      {role: libBoth, kind: libString},
	"ssl.ca.pem":                                        {role: libBoth, kind: libString},
	"ssl.ca.certificate.stores":                         {role: libBoth, kind: libString},
	"ssl.crl.location":                                  {role: libBoth, kind: libString},
	"ssl.keystore.location":                             {role: libBoth, kind: libString},
	"ssl.keystore.password":                             {role: libBoth, kind: libString},
	"ssl.providers":                                     {role: libBoth, kind: libString},
	"ssl.engine.location":                               {role: libBoth, kind: libString},
	"ssl.engine.id":                                     {role: libBoth, kind: libString},
	"enable.ssl.certificate.verification":               {role: libBoth, kind: libBool},
	"ssl.endpoint.identification.algorithm":             {role: libBoth, kind: libEnum, values: []string{"none", "https"}},
	"sasl.mechanisms":                                   {role: libBoth, kind: libString},
	"sasl.mechanism":                                    {role: libBoth, kind: libString},
	"sasl.kerberos.service.name":                        {role: libBoth, kind: libString},
	"sasl.kerberos.principal":                           {role: libBoth, kind: libString},
	"sasl.kerberos.kinit.cmd":                           {role: libBoth, kind: libString},
	"sasl.kerberos.keytab":                              {role: libBoth, kind: libString},
	"sasl.kerberos.min.time.before.relogin":             {role: libBoth, kind: libInt, min: 0, max: 86400000},
	"sasl.username":                                     {role: libBoth, kind: libString},
	"sasl.password":                                     {role: libBoth, kind: libString},
	"sasl.oauthbearer.config":                           {role: libBoth, kind: libString},
	"enable.sasl.oauthbearer.unsecure.jwt":              {role: libBoth, kind: libBool},
	"sasl.oauthbearer.method":                           {role: libBoth, kind: libEnum, values: []string{"default", "oidc"}},
	"sasl.oauthbearer.client.id":                        {role: libBoth, kind: libString},
	"sasl.oauthbearer.client.credentials.client.id":     {role: libBoth, kind: libString},
	"sasl.oauthbearer.client.credentials.client.secret": {role: libBoth, kind: libString},
	"sasl.oauthbearer.client.secret":                    {role: libBoth, kind: libString},
	"sasl.oauthbearer.scope":                            {role: libBoth, kind: libString},
	"sasl.oauthbearer.extensions":                       {role: libBoth, kind: libString},
	"sasl.oauthbearer.token.endpoint.url":               {role: libBoth, kind: libString},
	"sasl.oauthbearer.grant.type":                       {role: libBoth, kind: libEnum, values: []string{"client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"}},
	"sasl.oauthbearer.assertion.algorithm":              {role: libBoth, kind: libEnum, values: []string{"RS256", "ES256"}},
	"sasl.oauthbearer.assertion.private.key.file":       {role: libBoth, kind: libString},
	"sasl.oauthbearer.assertion.private.key.passphrase": {role: libBoth, kind: libString},
	"sasl.oauthbearer.assertion.private.key.pem":        {role: libBoth, kind: libString},
	"sasl.oauthbearer.assertion.file":                   {role: libBoth, kind: libString},
	"sasl.oauthbearer.assertion.claim.aud":              {role: libBoth, kind: libString},
	"sasl.oauthbearer.assertion.claim.exp.seconds":      {role: libBoth, kind: libInt, min: 1, max: 2147483647},
	"sasl.oauthbearer.assertion.claim.iss":              {role: libBoth, kind: libString},
	"sasl.oauthbearer.assertion.claim.jti.include":      {role: libBoth, kind: libBool},
	"sasl.oauthbearer.assertion.claim.nbf.seconds":      {role: libBoth, kind: libInt, min: 0, max: 2147483647},
	"sasl.oauthbearer.assertion.claim.sub":              {role: libBoth, kind: libString},
	"sasl.oauthbearer.assertion.jwt.template.file":      {role: libBoth, kind: libString},
	"plugin.library.paths":                              {role: libBoth, kind: libString},
	"group.id":                                          {role: libConsumer, kind: libString},
	"group.instance.id":                                 {role: libConsumer, kind: libString},
	"partition.assignment.strategy":                     {role: libConsumer, kind: libString},
	"session.timeout.ms":                                {role: libConsumer, kind: libInt, min: 1, max: 3600000},
	"heartbeat.interval.ms":                             {role: libConsumer, kind: libInt, min: 1, max: 3600000},
	"group.protocol.type":                               {role: libConsumer, kind: libString},
	"group.protocol":                                    {role: libConsumer, kind: libEnum, values: []string{"classic", "consumer"}},
	"group.remote.assignor":                             {role: libConsumer, kind: libString},
	"coordinator.query.interval.ms":                     {role: libConsumer, kind: libInt, min: 1, max: 3600000},
	"max.poll.interval.ms":                              {role: libConsumer, kind: libInt, min: 1, max: 86400000},
	"enable.auto.commit":                                {role: libConsumer, kind: libBool},
	"auto.commit.interval.ms":                           {role: libConsumer, kind: libInt, min: 0, max: 86400000},
	"enable.auto.offset.store":                          {role: libConsumer, kind: libBool},
	"queued.min.messages":                               {role: libConsumer, kind: libInt, min: 1, max: 10000000},
	"queued.max.messages.kbytes":                        {role: libConsumer, kind: libInt, min: 1, max: 2097151},
	"fetch.wait.max.ms":                                 {role: libConsumer, kind: libInt, min: 0, max: 300000},
	"fetch.queue.backoff.ms":                            {role: libConsumer, kind: libInt, min: 0, max: 300000},
	"fetch.message.max.bytes":                           {role: libConsumer, kind: libInt, min: 1, max: 1000000000},
	"max.partition.fetch.bytes":                         {role: libConsumer, kind: libInt, min: 1, max: 1000000000},
	"fetch.max.bytes":                                   {role: libConsumer, kind: libInt, min: 0, max: 2147483135},
	"fetch.min.bytes":                                   {role: libConsumer, kind: libInt, min: 1, max: 100000000},
	"fetch.error.backoff.ms":                            {role: libConsumer, kind: libInt, min: 0, max: 300000},
	"offset.store.method":                               {role: libConsumer, kind: libEnum, values: []string{"none", "file", "broker"}},
	"isolation.level":                                   {role: libConsumer, kind: libEnum, values: []string{"read_uncommitted", "read_committed"}},
	"enable.partition.eof":                              {role: libConsumer, kind: libBool},
	"check.crcs":                                        {role: libConsumer, kind: libBool},
	"client.rack":                                       {role: libBoth, kind: libString},
	"transactional.id":                                  {role: libProducer, kind: libString},
	"transaction.timeout.ms":                            {role: libProducer, kind: libInt, min: 1000, max: 2147483647},
	"enable.idempotence":                                {role: libProducer, kind: libBool},
	"enable.gapless.guarantee":                          {role: libProducer, kind: libBool},
	"queue.buffering.max.messages":                      {role: libProducer, kind: libInt, min: 0, max: 2147483647},
	"queue.buffering.max.kbytes":                        {role: libProducer, kind: libInt, min: 1, max: 2147483647},
	"queue.buffering.max.ms":                            {role: libProducer, kind: libFloat, min: 0, max: 900000},
	"linger.ms":                                         {role: libProducer, kind: libFloat, min: 0, max: 900000},
	"message.send.max.retries":                          {role: libProducer, kind: libInt, min: 0, max: 2147483647},
	"retries":                                           {role: libProducer, kind: libInt, min: 0, max: 2147483647},
	"retry.backoff.ms":                                  {role: libBoth, kind: libInt, min: 1, max: 300000},
	"retry.backoff.max.ms":                              {role: libBoth, kind: libInt, min: 1, max: 300000},
	"queue.buffering.backpressure.threshold":            {role: libProducer, kind: libInt, min: 1, max: 1000000},
	"compression.codec":                                 {role: libProducer, kind: libEnum, values: []string{"none", "gzip", "snappy", "lz4", "zstd"}},
	"compression.type":                                  {role: libProducer, kind: libEnum, values: []string{"none", "gzip", "snappy", "lz4", "zstd"}},
	"batch.num.messages":                                {role: libProducer, kind: libInt, min: 1, max: 1000000},
	"batch.size":                                        {role: libProducer, kind: libInt, min: 1, max: 2147483647},
	"delivery.report.only.error":                        {role: libProducer, kind: libBool},
	"sticky.partitioning.linger.ms":                     {role: libProducer, kind: libInt, min: 0, max: 900000},
	"client.dns.lookup":                                 {role: libBoth, kind: libEnum, values: []string{"use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"}},
	"enable.metrics.push":                               {role: libBoth, kind: libBool},
	"request.required.acks":                             {role: libProducer, kind: libInt, min: -1, max: 1000},
	"acks":                                              {role: libProducer, kind: libInt, min: -1, max: 1000},
	"request.timeout.ms":                                {role: libProducer, kind: libInt, min: 1, max: 900000},
	"message.timeout.ms":                                {role: libProducer, kind: libInt, min: 0, max: 2147483647},
	"delivery.timeout.ms":                               {role: libProducer, kind: libInt, min: 0, max: 2147483647},
	"queuing.strategy":                                  {role: libProducer, kind: libEnum, values: []string{"fifo", "lifo"}},
	"produce.offset.report":                             {role: libProducer, kind: libBool},
	"partitioner":                                       {role: libProducer, kind: libString},
	"compression.level":                                 {role: libProducer, kind: libInt, min: -1, max: 12},
	"auto.commit.enable":                                {role: libConsumer, kind: libBool},
	"auto.offset.reset":                                 {role: libConsumer, kind: libEnum, values: []string{"smallest", "earliest", "beginning", "largest", "latest", "end", "error"}},
	"offset.store.path":                                 {role: libConsumer, kind: libString},
	"offset.store.sync.interval.ms":                     {role: libConsumer, kind: libInt, min: -1, max: 86400000},
	"consume.callback.max.messages":                     {role: libConsumer, kind: libInt, min: 0, max: 1000000},
}
