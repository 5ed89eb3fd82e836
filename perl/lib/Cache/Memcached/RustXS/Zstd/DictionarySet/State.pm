package Cache::Memcached::RustXS::Zstd::DictionarySet::State;

# A dictionary set's state over time: the clock, and the one function that
# says, for a set's entries and a moment, each entry's state and since
# when, which entry each prefix's writers use and what every reader loads.
# Every reader of a set asks it; nothing else computes a state.

use strict;
use warnings;

use Carp ();
use Exporter 5.57 'import';
use Time::HiRes ();

use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(epoch_of manifest_date);

our $VERSION = '1.000';

our @EXPORT_OK = qw(now state_at is_staged staged_start);

# ---- the clock -----------------------------------------------------------------

# What now() returns when set: a code reference giving epoch seconds.
# Tests move time with it instead of sleeping; cmrx-dict sets it from the
# environment variable CMRX_DICT_NOW.
our $Clock;

sub now { $Clock ? $Clock->() : Time::HiRes::time() }

# When an entry staged for $stage seconds starts when its set is written
# at $written (epoch seconds): the next whole second after both, and one
# more for the write and the command that asked for it to end, so that it
# is at least $stage seconds after either.
sub staged_start {
    my ($written, $stage) = @_;
    my $at = $written + $stage;
    return ($at == int $at ? $at : int($at) + 1) + 1;
}

# ---- the state at a time ----------------------------------------------------------
#
# What the manifest writes: an entry is "open" (a candidate to be its
# prefix's writing dictionary) when its state is current, or when it is
# staged: retired with a current_from date and no retired date (the form
# releases that know no staging read as a dictionary to load for reading
# only). An open entry starts at its current_from (a current entry without
# one: always); at any moment the prefix's writers use the open entry that
# started last. Any other entry is closed: retired at its retired date,
# having been written with from its current_from (when it has one) until
# then, or never when its current_from is later than that date (a staged
# entry cancelled before its time) -- but from its written_from date until
# its written_until date when it has them (a retired entry staged again by
# a rollback, then cancelled).

sub is_staged {
    my ($e) = @_;
    return $e->{state} eq 'retired' && defined $e->{current_from} && !defined $e->{retired};
}

sub _is_open { $_[0]{state} eq 'current' || is_staged($_[0]) }

# Whether entry $e was a candidate at $at: open, or closed later than $at
# (what the set was before a write settled it), not cancelled.
sub _open_at {
    my ($e, $at) = @_;
    return 1 if _is_open($e);
    my ($from, $retired) = (epoch_of($e->{current_from}), epoch_of($e->{retired}));
    return defined $retired && $retired > $at && !(defined $from && $from > $retired);
}

# Epoch seconds an open entry starts at; -inf for always.
my $ALWAYS = -9**9**9;

sub _start_of { defined $_[0]{current_from} ? epoch_of($_[0]{current_from}) : $ALWAYS }

# The state of the set made of @$entries (and @$removed) at $at (epoch
# seconds): {
#   rows    => [ { entry, state (current, staged, retired, removed), since
#                  (a manifest date, or undef when unknown), wrote (whether
#                  writers used it before $at), wrote_until (epoch seconds
#                  they stopped; -inf when unknown; undef while they do or
#                  when they never did) } ] in the order of the entries,
#   writers => { prefix => the entry its writers use at $at },
#   loads   => [ every entry: what a reader holding the set loads ],
#   next_change => the first moment after $at a staged entry starts, or undef,
# }
sub state_at {
    my ($entries, $removed, $at) = @_;
    Carp::croak('state_at: a time (epoch seconds) is needed') unless defined $at;
    my (%writer, %started);    # by prefix: the open entries started by $at
    my $next;
    for my $e (grep { _open_at($_, $at) } @$entries) {
        my $start = _start_of($e);
        if ($start > $at) {
            $next = $start if !defined $next || $start < $next;
            next;
        }
        push @{ $started{ $e->{prefix} } }, [ $e, $start ];
        # The one started last; of two started together, the one listed last.
        my $w = $writer{ $e->{prefix} };
        $writer{ $e->{prefix} } = $e if !$w || $start >= _start_of($w);
    }
    my @rows;
    for my $e (@$entries) {
        my %row = (entry => $e, wrote => 0);
        if (_open_at($e, $at)) {
            my $start = _start_of($e);
            if ($start > $at) {
                @row{qw(state since)} = ('staged', $e->{current_from});
            }
            elsif ($writer{ $e->{prefix} } == $e) {
                @row{qw(state since wrote)} = ('current', defined $e->{current_from} ? $e->{current_from}
                                                                                    : $e->{trained}, 1);
            }
            else {
                # Taken over by the next one of its prefix to start.
                my ($until) = sort { $a <=> $b } map { $_->[1] }
                              grep { $_->[0] != $e && $_->[1] >= $start } @{ $started{ $e->{prefix} } };
                @row{qw(state since wrote wrote_until wrote_from)} = ('retired', manifest_date($until), 1, $until, $start);
            }
        }
        else {
            my ($from, $retired) = (epoch_of($e->{current_from}), epoch_of($e->{retired}));
            my $cancelled = defined $from && defined $retired && $from > $retired;
            # Retired by a release that drops current_from: its copy says
            # when writers took it up (of several that release retired at
            # one date, the one taken up last was used last).
            my $copy = defined $from ? undef : epoch_of($e->{current_from_copy});
            $from = $copy if defined $copy && defined $retired && $copy <= $retired;
            @row{qw(state since)} = ('retired', $e->{retired});
            @row{qw(wrote wrote_until wrote_from)} = (1, defined $retired ? $retired : $ALWAYS, defined $from ? $from : $ALWAYS)
                unless $cancelled;
            # A rollback to it that was cancelled: writers used it until
            # then, from when they took it up (when the set says).
            my ($before, $since) = (epoch_of($e->{written_until}), epoch_of($e->{written_from}));
            @row{qw(wrote wrote_until wrote_from)} = (1, $before, defined $since ? $since : $ALWAYS)
                if $cancelled && defined $before;
        }
        push @rows, \%row;
    }
    push @rows, map { +{ entry => $_, state => 'removed', since => $_->{removed}, wrote => 0 } } @$removed;
    # The entry each prefix's writers stopped using last: what a rollback goes back to.
    my %previous;
    for my $row (grep { $_->{wrote} && $_->{state} eq 'retired' } @rows) {
        my $before = $previous{ $row->{entry}{prefix} };
        # Of two that stopped in the same second, the one taken up later.
        $previous{ $row->{entry}{prefix} } = $row
            if !$before || $row->{wrote_until} > $before->{wrote_until}
               || ($row->{wrote_until} == $before->{wrote_until} && $row->{wrote_from} >= $before->{wrote_from});
    }
    $_ = $_->{entry} for values %previous;
    return { rows => \@rows, writers => \%writer, previous => \%previous, loads => [ @$entries ], next_change => $next };
}

1;

__END__

=head1 NAME

Cache::Memcached::RustXS::Zstd::DictionarySet::State - a dictionary set's state over time

=head1 SYNOPSIS

  use Cache::Memcached::RustXS::Zstd::DictionarySet::State qw(now state_at);

  my $state = state_at([], [], now());
  print scalar keys %{ $state->{writers} }, " prefixes written with a dictionary\n";

=head1 DESCRIPTION

The part of L<Cache::Memcached::RustXS::Zstd::DictionarySet> that says
what a set is at a moment. DictionarySet's methods, and every
C<cmrx-dict> command that reads a set, take their states from it.

=head1 FUNCTIONS

=over 4

=item state_at(\@entries, \@removed, $at)

The state of a set at C<$at> (epoch seconds): C<rows>, each entry's
C<state> (C<current>, C<staged>, C<retired>, C<removed>), C<since> when,
C<wrote> (whether writers used it before C<$at>) and C<wrote_until>;
C<writers> (the entry each prefix's writers use); C<previous> (the entry
each prefix's writers used last before that: what a rollback goes back
to); C<loads> (every entry: what a reader holding the set loads); and
C<next_change> (the next moment a staged entry starts, or undef).

=item now()

The clock they all read: epoch seconds, from
C<$Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock> (a code
reference) when it is set, else the system's. C<cmrx-dict> sets it from
the environment variable C<CMRX_DICT_NOW> (epoch seconds), so that what a
set does at a later moment can be tried without waiting for it.

=item is_staged($entry)

Whether a manifest entry is written as staged.

=item staged_start($written, $stage)

When an entry staged for C<$stage> seconds starts, its set written at
C<$written>: the next whole second after C<$written + $stage>, and one
more (for the command to end).

=back

=head1 SEE ALSO

L<Cache::Memcached::RustXS::Zstd::DictionarySet>

=cut
