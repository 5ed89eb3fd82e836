package Cache::Memcached::RustXS::Dict::Report::Set;

# The output of the cmrx-dict commands that show and change a dictionary
# set as it stands (prune, list, rollback, history), as text and as the
# data --json prints.

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS::Dict::Report qw(aligned_table table shown text plural duration_text prefix_text
                                              json_true json_false);

our $VERSION = '1.000';

our @EXPORT_OK = qw(print_prune prune_data print_list list_data print_rollback rollback_data
                    print_history history_data);

# ---- prune -------------------------------------------------------------------------------

sub print_prune {
    my ($fh, $result) = @_;
    printf {$fh} "cmrx-dict prune of the dictionary set in %s, against %s: %s listed, %s sampled (%s)\n",
        $result->{dir}, $result->{source}, plural($result->{keys}, 'key'), plural($result->{values}, 'value'),
        plural($result->{prefixes}, 'prefix', 'prefixes');
    printf {$fh} "A retired dictionary goes when no sampled value names it and it was retired at least %s ago.%s\n\n",
        duration_text($result->{retired_for}), $result->{dry_run} ? ' Dry run: nothing is changed.' : '';
    my %action = $result->{dry_run} ? (remove => 'would remove', keep => 'kept') : (remove => 'removed', keep => 'kept');
    aligned_table($fh, 'rlllrrlll', [ 'ID', 'prefix', 'state', 'file', 'bytes', 'named by', 'retired', 'action', 'why' ],
        map { [ $_->{id}, shown($_->{prefix}), $_->{state}, $_->{file}, $_->{size}, $_->{named_by},
                _retired_text($_), $action{ $_->{action} }, $_->{why} ] } @{ $result->{dictionaries} });
    my %by_id = map { ($_->{id} => $_) } @{ $result->{dictionaries} };
    my @gone = map { $by_id{$_} } @{ $result->{removed} };
    print {$fh} "\n";
    if (@gone) {
        my $bytes = 0;
        $bytes += $_->{size} for @gone;
        printf {$fh} "%s %s (%d bytes): %s. The manifest keeps %s, as removed, so that no other "
                   . "dictionary is given %s.\n", ($result->{dry_run} ? 'Would remove' : 'Removed'),
            plural(scalar @gone, 'dictionary', 'dictionaries'), $bytes, join(', ', map { "ID $_->{id} ($_->{file})" } @gone),
            (@gone == 1 ? ('its ID', 'it') : ('their IDs', 'them'));
    } else {
        print {$fh} "No dictionary to remove.\n";
    }
    for my $o (@{ $result->{other_ids} }) {
        printf {$fh} "ID %d, named by %s, is not in the set%s: readers of the set miss those values.\n",
            $o->{id}, plural($o->{named_by}, 'sampled value'), defined $o->{removed} ? " (removed $o->{removed})" : '';
    }
    print {$fh} "Dry run: the set was not changed.\n" if $result->{dry_run};
    return;
}

sub _retired_text {
    my ($d) = @_;
    return '-' if $d->{state} ne 'retired';    # current, or staged
    return $d->{retired} . (defined $d->{retired_ago} ? ' (' . duration_text($d->{retired_ago}) . ' ago)' : '');
}

sub prune_data {
    my ($result) = @_;
    my %data = map { ($_ => $result->{$_}) } qw(command dir source retired_for keys prefixes values removed other_ids);
    $data{dry_run} = $result->{dry_run} ? json_true() : json_false();
    $data{changed} = $result->{written} ? json_true() : json_false();
    $data{dictionaries} = [ map { my $d = $_; +{ (map { defined $d->{$_} ? ($_ => $d->{$_}) : () } keys %$d),
                                                 prefix => text($d->{prefix}) } } @{ $result->{dictionaries} } ];
    return \%data;
}

# ---- list and rollback ----------------------------------------------------------------

sub print_list {
    my ($fh, $list) = @_;
    printf {$fh} "The dictionary set in %s (identity %s), at %s: %s\n", $list->{dir}, $list->{identity}, $list->{now},
        plural(scalar(grep { $_->{state} ne 'removed' } @{ $list->{dictionaries} }), 'dictionary', 'dictionaries');
    printf {$fh} "Keys without a dictionary get the fallback: %s level %d.\n", @{ $list->{fallback} }{qw(method level)};
    printf {$fh} "Next change: %s.\n", $list->{next_change} if defined $list->{next_change};
    print {$fh} "\n";
    my @rows = map {
        [ $_->{id}, prefix_text($_->{prefix}), $_->{state}, defined $_->{since} ? $_->{since} : 'unknown',
          map { defined $_ ? $_ : '-' } @{$_}{qw(level size file)} ]
    } @{ $list->{dictionaries} };
    table($fh, [ 'ID', 'prefix', 'state', 'since', 'level', 'bytes', 'file' ], @rows);
    return;
}

sub list_data {
    my ($list) = @_;
    return { %$list, dictionaries => [ map { +{ %$_, prefix => text($_->{prefix}) } } @{ $list->{dictionaries} } ] };
}

sub print_rollback {
    my ($fh, $result) = @_;
    my $prefix = prefix_text($result->{prefix});
    my $c = $result->{cancelled};
    if ($result->{kind} eq 'cancel') {
        printf {$fh} "%s decision %d (%s of %s, due %s): writers of %s stay on %s.\n",
            ($result->{dry_run} ? 'Would cancel' : 'Cancelled'), $c->{seq}, $c->{kind},
            defined $c->{id} ? "dictionary $c->{id}" : 'nothing', $c->{effective_date},
            $prefix, defined $result->{from} ? "dictionary $result->{from}" : 'the fallback';
    }
    else {
        printf {$fh} "Dictionary %d %s the current one of %s %s%s.\n", $result->{to},
            ($result->{dry_run} ? 'would be' : 'is'), $prefix,
            $result->{at_once} ? 'at once' : "from $result->{current_from}",
            defined $result->{from} ? ", instead of $result->{from}" : '';
        printf {$fh} "It supersedes decision %d (%s of %s, due %s), which never takes effect.\n", $c->{seq},
            $c->{kind}, defined $c->{id} ? "dictionary $c->{id}" : 'nothing', $c->{effective_date} if $c;
    }
    print {$fh} $result->{dry_run} ? "Dry run: the set is not changed.\n"
                                   : "Ship the set to every host; writers follow it within their rescan interval.\n";
    return;
}

sub rollback_data {
    my ($result) = @_;
    return { %$result, prefix => text($result->{prefix}) };
}


# ---- history ---------------------------------------------------------------------------

sub print_history {
    my ($fh, $history) = @_;
    printf {$fh} "The decisions of the dictionary set in %s%s, at %s: %s\n", $history->{dir},
        defined $history->{prefix} ? ' for ' . prefix_text($history->{prefix}) : '', $history->{now},
        plural(scalar @{ $history->{decisions} }, 'decision');
    print {$fh} "\n";
    my @rows = map {
        [ $_->{seq}, map({ defined $_ ? $_ : 'unknown' } @$_{qw(made effective)}), prefix_text($_->{prefix}),
          $_->{kind}, defined $_->{dictionary} ? $_->{dictionary} : '-', _outcome_text($_) ]
    } @{ $history->{decisions} };
    table($fh, [ 'seq', 'made', 'effective', 'prefix', 'kind', 'dictionary', 'outcome' ], @rows);
    return;
}

sub _outcome_text {
    my ($d) = @_;
    my $text = $d->{status};
    $text .= " by $d->{superseded_by}" if defined $d->{superseded_by};
    $text .= ", cancelled $d->{cancels}" if defined $d->{cancels};
    return $text;
}

sub history_data {
    my ($history) = @_;
    return { %$history, (defined $history->{prefix} ? (prefix => text($history->{prefix})) : ()),
             decisions => [ map { +{ %$_, prefix => text($_->{prefix}) } } @{ $history->{decisions} } ] };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Report::Set - the output of cmrx-dict prune, list, rollback and history

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Report::Set qw(print_history);

    open my $fh, '>', \my $text or die $!;
    print_history($fh, { dir => 'dictionaries', now => '2026-05-01T10:00:00Z',
                         decisions => [ { seq => 1, made => '2026-05-01T10:00:00Z', effective => '2026-05-01T11:00:01Z',
                                          prefix => 'user:', kind => 'train', dictionary => 7, status => 'pending' } ] });
    print $text;

=head1 DESCRIPTION

How L<cmrx-dict> prints what C<prune>, C<list>, C<rollback> and
C<history> found or did, with the table helpers of
L<Cache::Memcached::RustXS::Dict::Report>.

=head1 FUNCTIONS

=over 4

=item print_prune($fh, $result), prune_data($result)

The result of C<prune_set> (L<Cache::Memcached::RustXS::Dict::Prune/FUNCTIONS>)
as a table of the set's dictionaries with a line of totals (what was
removed or would be, what is kept and why), or as data for JSON.

=item print_list($fh, $list), list_data($list), print_rollback($fh, $result), rollback_data($result)

The results of C<list_set> and C<rollback_set>
(L<Cache::Memcached::RustXS::Dict::Rollout/FUNCTIONS>): the set's
dictionaries in a table with their state and since when, and what a
rollback did (or which decision it cancelled); or as data for JSON.

=item print_history($fh, $history), history_data($history)

The result of C<history_set> (L<Cache::Memcached::RustXS::Dict::Rollout/FUNCTIONS>):
the set's decisions in a table (seq, made, effective, prefix, kind,
dictionary, outcome), or as data for JSON.

=back

=head1 SEE ALSO

L<cmrx-dict>, whose list, rollback, history and prune print through
this module; L<Cache::Memcached::RustXS::Dict::Report>, the tables and
text it shares with the other commands.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
