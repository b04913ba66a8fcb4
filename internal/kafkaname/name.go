// Package kafkaname checks Kafka topic names as Kafka itself does, so that a
// bad name is a configuration error before anything starts (a 300-character
// name once broke the broker's restart: its snapshot file name was too
// long).
package kafkaname

import (
	"fmt"
)

// MaxTopic is Kafka's longest topic name.
const MaxTopic = 249

// Topic checks a topic name: 1 to 249 characters of [a-zA-Z0-9._-], not
// "." or "..".
func Topic(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic: empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic %q: not a valid name", name)
	case len(name) > MaxTopic:
		return fmt.Errorf("topic %.40q...: %d characters, Kafka allows at most %d", name, len(name), MaxTopic)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic %q: character %q at %d is not one of a-z A-Z 0-9 . _ -", name, c, i)
		}
	}
	return nil
}
