// Package bm25 ranks text documents against a query with Okapi BM25, the
// ranking function behind most keyword search engines.
//
// An [Index] is built once from a slice of [Document] values and is then
// read-only, so any number of goroutines may search it at the same time.
//
// Text is turned into terms by [Tokenize]: it is split on everything that is
// not a letter or a digit, lower-cased, stripped of common English stop words
// and reduced with the Snowball English (Porter2) stemmer, so "Pricing" and
// "prices" both become "price".
//
// A document d scores against a query q as the sum, over the distinct terms t
// of q, of
//
//	IDF(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl))
//
// where tf(t,d) is how often t occurs in d, |d| is the number of terms in d,
// avgdl is the mean of |d| over the index, and
//
//	IDF(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))
//
// with N documents of which n(t) contain t. This is the non-negative IDF used
// by Lucene: a term found in every document still adds a little. k1 (default
// 1.2) controls how quickly repeated occurrences stop adding to the score; b
// (default 0.75) controls how strongly long documents are penalised (0: not at
// all, 1: fully normalised by length).
package bm25
