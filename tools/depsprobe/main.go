package main
import (
 _ "github.com/redis/go-redis/v9"
 _ "github.com/meilisearch/meilisearch-go"
 _ "modernc.org/sqlite"
 _ "github.com/cespare/xxhash/v2"
 _ "github.com/gabriel-vasile/mimetype"
 _ "go.yaml.in/yaml/v3"
 _ "github.com/rs/zerolog"
 _ "github.com/robfig/cron/v3"
 _ "github.com/prometheus/client_golang/prometheus"
 _ "github.com/fsnotify/fsnotify"
)
func main(){}
