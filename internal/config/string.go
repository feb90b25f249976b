package config

import (
	"strconv"
	"strings"
)

// String describes the configuration on one line as NAME=value pairs, for the startup log.
// Secrets (the Redis password, the Meilisearch API key) appear as xxxxx.
func (c *Config) String() string {
	var b strings.Builder
	add := func(name, value string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		b.WriteByte('=')
		if value == "" || strings.ContainsAny(value, " \t\"") {
			value = strconv.Quote(value)
		}
		b.WriteString(value)
	}
	itoa := strconv.Itoa
	add(envIndexDirectory, c.IndexDirectory)
	add(envMetadataDirectory, c.MetadataDirectory)
	add(envStateDirectory, c.StateDirectory)
	add(envArchiveDirectory, c.ArchiveDirectory)
	add(envCronExpression, c.CronExpression)
	add(envMeiliHost, c.Meilisearch.Host)
	if c.Meilisearch.APIKey != "" {
		add(envMeiliAPIKey, redactedSecret)
	}
	add(envMeiliIndex, c.Meilisearch.IndexName)
	add(envMeiliChunkIndex, c.Meilisearch.ChunkIndexName)
	add(envHTTPAddr, c.HTTPAddr)
	if c.HTTPToken != "" {
		add(envHTTPToken, redactedSecret)
	}
	if c.HTTPInsecureNoAuth {
		add(envHTTPInsecure, "true")
	}
	add(envLoggingLevel, c.LogLevel)
	add(envLogFormat, c.LogFormat)
	add(envModules, strings.Join(c.ModuleNames(), ","))
	add(envRedisHost, c.Redis.String())
	if c.Redis.CAFile != "" {
		add(envRedisTLSCAFile, c.Redis.CAFile)
	}
	p := c.Pipeline
	add(envDispatchWindow, itoa(p.DispatchWindow))
	add(envReapInterval, p.ReapInterval.String())
	add(envRetryBase, p.RetryBase.String())
	add(envRetryMax, p.RetryMax.String())
	add(envMaxAttempts, itoa(p.MaxAttempts))
	add(envChunkTokens, itoa(p.ChunkTokens))
	add(envChunkOverlap, itoa(p.ChunkOverlap))
	add(envHashWorkers, itoa(p.HashWorkers))
	add(envFailedMax, itoa(p.FailedMax))
	return b.String()
}
