package CMRXTest::Timing;

# Test helper: wall-clock assertions, made only when CMRX_TIMING_TESTS is
# set (xt/timing-*.t set it). See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use Test::More ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(timing_ok timing_tests timing_skip);

sub timing_tests { $ENV{CMRX_TIMING_TESTS} ? 1 : 0 }

# The reason a wall-clock assertion is skipped.
sub timing_skip {
    my ($name) = @_;
    return 'wall-clock bound, asserted with CMRX_TIMING_TESTS=1 (xt/timing-*.t)'
         . (defined $name ? ": $name" : '');
}

# cmp_ok($got, $op, $bound, $name) under CMRX_TIMING_TESTS; a skip otherwise.
sub timing_ok {
    my ($got, $op, $bound, $name) = @_;
    if (!timing_tests()) {
        Test::More->builder->skip(timing_skip($name));
        return 1;
    }
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    return Test::More::cmp_ok($got, $op, $bound, $name);
}

1;

__END__

=head1 NAME

CMRXTest::Timing - wall-clock assertions that only xt/ makes

=head1 SYNOPSIS

    use CMRXTest::Timing qw(timing_ok timing_tests timing_skip);

    my $t0 = time;
    my $got = $memd->get_multi(@keys);
    is_deeply $got, \%want, 'every value';               # always
    timing_ok time - $t0, '<', 0.5, 'returns at once';   # xt/ only

    SKIP: {    # a measurement that is only worth making for its bound
        skip timing_skip('time is linear'), 1 unless timing_tests();
        ...
    }

=head1 DESCRIPTION

How long something takes on a shared or loaded machine is not a property
of the code, so the tests in F<t/> assert behaviour (results, values,
keys) and leave bounds on elapsed time to F<xt/>. A test file keeps its
timing assertions next to the behaviour they qualify, written with
C<timing_ok>; they are made when C<$ENV{CMRX_TIMING_TESTS}> is true and
otherwise reported as skipped, so the number of tests is the same either
way. F<xt/timing-*.t> run such a file with the variable set:

    prove -b xt/timing-getparser-hostile.t
    CMRX_TIMING_TESTS=1 prove -b t/12-getparser-hostile.t    # the same

=over 4

=item C<timing_ok($got, $op, $bound, $name)>

C<Test::More::cmp_ok> when timing assertions are on, else a skip.

=item C<timing_tests>

True when they are on.

=item C<timing_skip($name)>

The skip reason, for a C<SKIP> block around a measurement made only for
its bound.

=back

=cut
