// Package kafkaname checks Kafka topic names as Kafka itself does, so that a
// bad name is a configuration error before anything starts (a 300-character
// name once broke the broker's restart: its snapshot file name was too
// long).
package kafkaname

import (
	"fmt"
	"strconv"
)

// MaxTopic is Kafka's longest topic name.
const MaxTopic = 249

// quoteBytes is how much of a name a message quotes.
const quoteBytes = 60

// Quote is name quoted for a message: at most its first 60 bytes, then how
// long it is, so that an error message stays short (~100 bytes) whatever
// the name.
func Quote(name string) string {
	if len(name) <= quoteBytes {
		return strconv.Quote(name)
	}
	cut := quoteBytes
	for cut > 0 && cut < len(name) && name[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(name[:cut]), len(name))
}

// Topic checks a topic name: 1 to 249 characters of [a-zA-Z0-9._-], not
// "." or "..". The error quotes at most 60 bytes of it (Quote).
func Topic(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("topic: empty")
	case name == "." || name == "..":
		return fmt.Errorf("topic %q: not a valid name", name)
	case len(name) > MaxTopic:
		return fmt.Errorf("topic %s: %d characters, Kafka allows at most %d", Quote(name), len(name), MaxTopic)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("topic %s: character %q at %d is not one of a-z A-Z 0-9 . _ -", Quote(name), c, i)
		}
	}
	return nil
}
