// Package sessions makes one scrape job look like one user: a sticky proxy
// lease, one cookie jar and one header profile for the whole job, paced so
// the proxy never sends to the site faster than the site's min_interval
// (I2). A session is stored in Redis under the task's ID, so a retry of the
// same task on another server resumes the same proxy and cookies.
//
// Sessions keep their lease alive while open, score their own health
// (Crawlee-style: a bad response adds 1, a good one takes 0.5 off) and
// retire at a score of 3, a maximum usage or a maximum age. Outcome maps a
// detect verdict to the broker action; it is the one place that mapping
// lives.
package sessions
