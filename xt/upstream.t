#!/usr/bin/perl
# The clients' own test suites with our modules in place, through
# script/upstream-tests: Cache::Memcached 1.30's t/ with parser_class forced
# to Cache::Memcached::RustXS::GetParser, Cache::Memcached::Fast 0.28's t/
# and IO-Compress's t/cz-*.t with override_compress_zlib().
#
# It fetches the upstream sources with apt from Debian's archive and runs
# memcached on 127.0.0.1:11211, so it runs only when asked for:
#   CMRX_UPSTREAM_TESTS=1      run the suites; a source that cannot be
#                              fetched is skipped, not failed;
#   CMRX_UPSTREAM_REQUIRE=a,b  (with the above) these suites must be
#                              obtained and pass (script/upstream-tests
#                              --require: a Cache::Memcached, b Fast,
#                              c IO-Compress).
# Not in t/: it touches the system (apt, a fixed port). After `make` (the
# script tests the module built in blib/):
#   CMRX_UPSTREAM_TESTS=1 prove -b xt/upstream.t
use strict;
use warnings;

use File::Spec;
use FindBin qw($Bin);
use POSIX ();
use Test::More;

plan skip_all => 'upstream test suites: set CMRX_UPSTREAM_TESTS=1 to run them '
               . "(they fetch sources with apt and use memcached on 127.0.0.1:11211)"
    unless $ENV{CMRX_UPSTREAM_TESTS};

my $script = File::Spec->catfile($Bin, File::Spec->updir, 'script', 'upstream-tests');
ok -f $script, 'script/upstream-tests exists' or BAIL_OUT("no $script");

my $require = $ENV{CMRX_UPSTREAM_REQUIRE} // '';
my @args = length $require ? ('--require', $require) : ();
my ($status, $output) = run($^X, $script, @args);

my @results = $output =~ /^RESULT ([abc]) (PASS|FAIL|SKIP) (.*)$/mg;
ok @results, 'script/upstream-tests printed its per-suite results'
    or diag $output;
while (my ($id, $result, $text) = splice @results, 0, 3) {
    if ($result eq 'SKIP') {
        SKIP: { skip "($id) $text", 1 }
    }
    else {
        ok $result eq 'PASS', "($id) $text";
    }
}

$status == 0 ? note($output) : diag($output);
is $status, 0, 'script/upstream-tests exited 0';

done_testing;

# Runs a command with stdout and stderr captured together (the script's
# output must not reach the harness as TAP). Returns ($?, output).
sub run {
    my @cmd = @_;
    pipe my $r, my $w or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $r;
        open STDOUT, '>&', $w or POSIX::_exit(126);
        open STDERR, '>&', $w or POSIX::_exit(126);
        exec @cmd or POSIX::_exit(127);
    }
    close $w;
    my $output = do { local $/; <$r> } // '';
    close $r;
    waitpid $pid, 0;
    return ($?, $output);
}
