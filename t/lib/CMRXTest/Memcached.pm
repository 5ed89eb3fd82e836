package CMRXTest::Memcached;

# Test helper: memcached servers for tests (CMRXDev::Memcached, which the
# benchmark uses too), with what a test does on a host without memcached:
# skip, or fail where CMRX_REQUIRE_MEMCACHED says memcached is required.
# See the POD at the end of the file.

use strict;
use warnings;

use CMRXTest::DevLib;    # dev/lib, where CMRXDev::Memcached lives
use parent 'CMRXDev::Memcached';

our $VERSION = '0.01';

# Like start(), but when memcached cannot be started: return nothing and
# keep the reason for unavailable(), or (CMRX_REQUIRE_MEMCACHED) die.
my $UNAVAILABLE;

sub start_optional {
    my ($class, %opt) = @_;
    undef $UNAVAILABLE;
    my @servers = eval { $class->start(%opt) };
    return wantarray ? @servers : $servers[0] if @servers;
    (my $why = $@ || "memcached did not start") =~ s/\s+\z//;
    die "FATAL: $why (memcached is required here: "
      . "CMRX_REQUIRE_MEMCACHED is set)\n" if $class->required;
    $UNAVAILABLE = $why;
    return;
}

# Why the last start_optional returned nothing (undef if it did not fail).
sub unavailable { $UNAVAILABLE }

# True when a test must fail, not skip, without memcached.
sub required { $ENV{CMRX_REQUIRE_MEMCACHED} ? 1 : 0 }

# Like start_optional(), but when memcached cannot be started: skip the
# whole test file (or, with CMRX_REQUIRE_MEMCACHED, fail it loudly).
# Call it before any plan or test.
sub start_or_skip {
    my ($class, %opt) = @_;
    # A skip_all plan after tests is a "Bad plan" that only hosts without
    # memcached would see: refuse it where memcached runs too.
    require Test::More;
    my $builder = Test::More->builder;
    die "start_or_skip after ${\ $builder->current_test} test(s) or a plan: "
      . "a file that has run tests takes start_or_skip_rest\n"
        if $builder->current_test || $builder->has_plan;
    my @servers = $class->start_optional(%opt);
    return wantarray ? @servers : $servers[0] if @servers;
    Test::More::plan(skip_all => $UNAVAILABLE);
    exit 0;    # not reached: skip_all exits
}

# Like start_optional(), for a file that has already run tests without a
# server: when memcached cannot be started, the rest of the file is skipped
# (one skip that gives the reason, then done_testing), or, with
# CMRX_REQUIRE_MEMCACHED, the file fails. The file must end in done_testing.
sub start_or_skip_rest {
    my ($class, %opt) = @_;
    my @servers = $class->start_optional(%opt);
    return wantarray ? @servers : $servers[0] if @servers;
    require Test::More;
    Test::More->builder->skip($UNAVAILABLE);
    Test::More::done_testing();
    exit 0;
}

1;

__END__

=head1 NAME

CMRXTest::Memcached - memcached servers for tests, skipped or required

=head1 SYNOPSIS

    use lib 't/lib';
    use Test::More;
    use CMRXTest::Memcached;

    my @servers = CMRXTest::Memcached->start_or_skip(
        count => 3, args => ['-I', '32m']);
    my @addrs = map { $_->address } @servers;   # "127.0.0.1:PORT"
    ...
    $servers[0]->stop;       # or let them go out of scope / END

=head1 DESCRIPTION

A subclass of L<CMRXDev::Memcached> (F<dev/lib>, shared with the
benchmark), which starts and stops the servers: see it for how, and for
C<start>, C<find_binary>, C<address>, C<host>, C<port>, C<pid> and C<stop>.
This class adds what a test does when memcached cannot be started.

=head1 METHODS

=over 4

=item C<< CMRXTest::Memcached->start_optional(count => N, args => [...]) >>

Like C<start>. If memcached cannot be started, returns nothing (undef in
scalar context) and C<unavailable> tells why, so a test can skip just the
cases that need memcached -- unless C<$ENV{CMRX_REQUIRE_MEMCACHED}> is true:
then it dies, so the test fails.

=item C<< CMRXTest::Memcached->start_or_skip(%same) >>

Like C<start_optional>, but if memcached cannot be started the whole test
file is skipped (C<plan skip_all> with the reason, e.g. "memcached not found
in PATH; install it"), or, with C<CMRX_REQUIRE_MEMCACHED>, fails. Call it
before planning or running any test.

=item C<< CMRXTest::Memcached->start_or_skip_rest(%same) >>

For a file that has already run tests of its own (which then cannot be
skipped as a whole): like C<start_optional>, but if memcached cannot be
started the rest of the file is skipped: one skipped test gives the
reason, C<done_testing> ends the plan, and the file exits 0. With
C<CMRX_REQUIRE_MEMCACHED> it fails. The file must plan with
C<done_testing>. C<start_or_skip> called after a test or a plan dies,
with memcached or without, naming this method.

=item C<< CMRXTest::Memcached->unavailable >>

The reason the last C<start_optional> failed, one line; undef after a
success.

=item C<< CMRXTest::Memcached->required >>

True when C<$ENV{CMRX_REQUIRE_MEMCACHED}> is: tests must then fail, not
skip, without memcached. Nothing else (in particular no generic C<CI>
variable) changes that.

=back

=cut
